#include "store/object_handle.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "store/bck.h"
#include "util/checksum.h"

namespace ais {

Result<UniqueFd> OpenChunk(const Mountpaths& mps, const std::string& bucket, const std::string& upload_id,
                           uint32_t num) {
  size_t at = mps.ForChunk(upload_id, num);
  auto fd = OpenFile(mps.ChunkPath(at, bucket, upload_id, num), O_RDONLY);
  if (fd.ok() || !fd.status().IsNotFound() || mps.size() == 1) return fd;
  for (size_t m = 0; m < mps.size(); ++m) {
    if (m == at || !mps.enabled(m)) continue;
    auto other = OpenFile(mps.ChunkPath(m, bucket, upload_id, num), O_RDONLY);
    if (other.ok() || !other.status().IsNotFound()) return other;
  }
  if (mps.num_disabled() > 0) {
    return Status::IOError(BucketCname(bucket) + ": chunk " + std::to_string(num) + " of upload " + upload_id +
                           " is unavailable (mountpath disabled)");
  }
  return fd;
}


Status ObjectHandle::OpenAll() {
  auto segs = Slice(0, meta_.size);
  if (!segs.ok()) return segs.status();
  all_ = std::move(*segs);
  starts_.clear();
  uint64_t pos = 0;
  for (const auto& s : all_) {
    starts_.push_back(pos);
    pos += s.len;
  }
  return Status::OK();
}

std::vector<FileSegment> ObjectHandle::Segments(uint64_t start, uint64_t len) const {
  std::vector<FileSegment> out;
  if (len == 0) return out;
  auto it = std::upper_bound(starts_.begin(), starts_.end(), start);
  size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
  const uint64_t end = start + len;
  for (; i < all_.size() && starts_[i] < end; ++i) {
    uint64_t s = std::max(start, starts_[i]);
    uint64_t e = std::min(end, starts_[i] + all_[i].len);
    out.push_back({all_[i].fd, all_[i].offset + (s - starts_[i]), e - s});
  }
  return out;
}

Status ObjectHandle::ReadAt(uint64_t start, void* buf, size_t len) const {
  return ReadSegments(Segments(start, len), static_cast<char*>(buf));
}

Result<std::vector<FileSegment>> ObjectHandle::Slice(uint64_t start, uint64_t len) {
  std::vector<FileSegment> out;
  if (len == 0) return out;
  if (!meta_.chunked()) {
    out.push_back({primary_.get(), data_offset_ + start, len});
    return out;
  }
  uint64_t chunk_start = 0;
  const uint64_t end = start + len;
  for (size_t i = 0; i < meta_.chunk_sizes.size() && chunk_start < end; ++i) {
    uint64_t chunk_end = chunk_start + meta_.chunk_sizes[i];
    if (chunk_end > start) {
      auto num = static_cast<uint32_t>(i + 1);
      auto it = chunks_.find(num);
      if (it == chunks_.end()) {
        auto fd = OpenChunk(*mps_, bucket_, meta_.upload_id, num);
        const std::string what = ObjectCname(bucket_, meta_.name) + ": chunk " + std::to_string(num);
        struct stat st {};
        if (!fd.ok()) {
          if (!fd.status().IsNotFound()) return fd.status();
          // Gone with its object (overwritten or deleted: the object file we hold is unlinked), or lost.
          if (::fstat(primary_.get(), &st) == 0 && st.st_nlink == 0) {
            return Status::Conflict("object was overwritten during the read");
          }
          return Status::Corruption(what + " is missing");
        }
        if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "fstat " + what);
        if (static_cast<uint64_t>(st.st_size) != meta_.chunk_sizes[i]) {
          return Status::Corruption(what + " is " + std::to_string(st.st_size) + " bytes, its manifest says " +
                                    std::to_string(meta_.chunk_sizes[i]));
        }
        it = chunks_.emplace(num, std::move(*fd)).first;
      }
      uint64_t s = std::max(start, chunk_start);
      uint64_t e = std::min(end, chunk_end);
      out.push_back({it->second.get(), s - chunk_start, e - s});
    }
    chunk_start = chunk_end;
  }
  return out;
}


Status ObjectHandle::VerifyChecksum() {
  if (meta_.cksum_type.empty() || meta_.cksum_value.empty()) return Status::OK();
  const std::string cname = ObjectCname(bucket_, meta_.name);
  auto ck = Checksummer::Create(meta_.cksum_type);
  if (!ck.ok()) return Status::Corruption(cname + ": object header is damaged: checksum type \"" + meta_.cksum_type + "\"");
  if (!*ck) return Status::OK();  // "none"
  auto segs = Slice(0, meta_.size);
  if (!segs.ok()) return segs.status();
  std::vector<char> buf(kSegmentBuf);
  AIS_RETURN_IF_ERROR(StreamSegments(*segs, buf, [&ck](const char* p, size_t n) {
    (*ck)->Update(p, n);
    return Status::OK();
  }));
  std::string got = (*ck)->FinishHex();
  if (got != meta_.cksum_value) {
    return Status::Corruption("BAD DATA CHECKSUM: " + cname + ": " + meta_.cksum_type + "(" + got + ") != " +
                              meta_.cksum_type + "(" + meta_.cksum_value + ")");
  }
  return Status::OK();
}

}  // namespace ais
