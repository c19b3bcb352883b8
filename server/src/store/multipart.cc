#include "store/multipart.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "store/bck.h"
#include "util/file_segment.h"
#include "store/object_handle.h"
#include "util/checksum.h"
#include "util/clock.h"
#include "util/strings.h"

namespace ais {

struct MpuUpload {
  std::string bucket;
  std::string name;
  std::string id;
  size_t primary_mp = 0;
  std::vector<std::pair<std::string, std::string>> custom;
  std::mutex mu;
  int64_t created_ns = 0;
  std::map<uint32_t, uint64_t> parts;  // guarded by mu: part number -> size
  std::map<uint32_t, std::string> tags;  // guarded by mu: part number -> PartWriter::Commit's tag
  bool finished = false;               // guarded by mu
};

namespace {

// An upload that was completed or aborted is gone, as AIS reports it.
Status UploadGone(const std::string& bucket, const std::string& name, const std::string& upload_id) {
  return Status::NotFound(ObjectCname(bucket, name) + ": upload ID \"" + upload_id +
                          "\" does not exist (already completed or aborted)");
}

// Where part `num` goes: round-robin (ForChunk), but in a mirrored bucket with the object file
// (the mountpath the upload commits to), as a chunked PUT's chunks: a copy then stands in for
// the whole object when any one disk is lost.
size_t PartPlace(const BucketRegistry& buckets, const Mountpaths& mps, const MpuUpload& up, uint32_t num) {
  auto props = buckets.Get(up.bucket);
  if (props && props->copies() > 1 && mps.placeable(up.primary_mp)) return up.primary_mp;
  return mps.ForChunk(up.id, num);
}

}  // namespace

Result<std::string> MultipartUploads::Create(const std::string& bucket, const std::string& name,
                                             std::vector<std::pair<std::string, std::string>> custom) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  auto up = std::make_shared<MpuUpload>();
  up->bucket = bucket;
  up->name = name;
  up->id = RandomId(16);
  up->primary_mp = mps_.PrimaryFor(bucket, name);
  up->custom = std::move(custom);
  up->created_ns = NowNs();
  AIS_RETURN_IF_ERROR(commit_.WriteChunkMarker(up->primary_mp, bucket, name, up->id));
  std::lock_guard lock(mu_);
  uploads_[up->id] = up;
  return up->id;
}

Result<std::shared_ptr<MpuUpload>> MultipartUploads::Find(const std::string& bucket, const std::string& name,
                                                          const std::string& upload_id) {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second->bucket != bucket || it->second->name != name) {
    return Status::NotFound(ObjectCname(bucket, name) + ": upload ID \"" + upload_id + "\" does not exist");
  }
  return it->second;
}

Result<std::unique_ptr<PartWriter>> MultipartUploads::Part(const std::string& bucket, const std::string& name,
                                                           const std::string& upload_id, uint32_t num, uint64_t size) {
  if (num < 1 || num > kMaxChunks) {
    return Status::InvalidArgument("invalid part number " + std::to_string(num) + " (expecting 1..9999)");
  }
  auto up = Find(bucket, name, upload_id);
  if (!up.ok()) return up.status();
  size_t mp = PartPlace(buckets_, mps_, **up, num);
  AIS_RETURN_IF_ERROR(commit_.MakeChunkDir(mp, bucket, upload_id));
  std::unique_ptr<PartWriter> w(new PartWriter());
  w->upload_ = *up;
  w->num_ = num;
  w->expected_ = size;
  w->final_path_ = mps_.ChunkPath(mp, bucket, upload_id, num);
  w->temp_path_ = w->final_path_ + "." + RandomId(8) + ".tmp";
  auto fd = OpenFile(w->temp_path_, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.status();
  w->fd_ = std::move(*fd);
  return w;
}

Result<MpuInfo> MultipartUploads::Describe(const std::string& bucket, const std::string& name,
                                           const std::string& upload_id) {
  auto found = Find(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  MpuInfo info{.name = up.name, .id = up.id, .created_ns = up.created_ns, .parts = {}};
  for (const auto& [num, size] : up.parts) {
    auto tag = up.tags.find(num);
    info.parts.push_back(MpuPartInfo{.num = num, .size = size, .tag = tag == up.tags.end() ? "" : tag->second});
  }
  return info;
}

std::vector<MpuInfo> MultipartUploads::List(const std::string& bucket) {
  std::vector<MpuInfo> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, up] : uploads_) {
      if (up->bucket == bucket) out.push_back(MpuInfo{.name = up->name, .id = id, .created_ns = up->created_ns, .parts = {}});
    }
  }
  std::sort(out.begin(), out.end(), [](const MpuInfo& a, const MpuInfo& b) {
    return a.name != b.name ? a.name < b.name : a.created_ns != b.created_ns ? a.created_ns < b.created_ns : a.id < b.id;
  });
  return out;
}

Status MultipartUploads::Complete(const std::string& bucket, const std::string& name, const std::string& upload_id,
                                  std::vector<uint32_t> parts,
                                  const std::vector<std::pair<std::string, std::string>>& extra_custom, ObjectMeta* out,
                                  const WriteThroughFn& through) {
  auto found = Find(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  // Wording as AIS (ais/tgtmpt.go, core/ufest.go): the SDK and users match on it.
  if (up.parts.empty()) {
    return Status::InvalidArgument(ObjectCname(bucket, name) + ": upload ID \"" + upload_id + "\": no chunks");
  }
  if (parts.size() != up.parts.size()) {
    return Status::NotSupported(ObjectCname(bucket, name) + ": partial completion is not allowed: requested " +
                                std::to_string(parts.size()) + " parts, have " + std::to_string(up.parts.size()));
  }
  std::sort(parts.begin(), parts.end());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != i + 1 || !up.parts.count(parts[i])) {
      std::string what = i > 0 && parts[i] == parts[i - 1] ? " (duplicate part " + std::to_string(parts[i]) + ")" : "";
      return Status::InvalidArgument(ObjectCname(bucket, name) + ": parts must be exactly 1.." +
                                     std::to_string(parts.size()) + ": got " + std::to_string(parts[i]) +
                                     " at position " + std::to_string(i) + what);
    }
  }
  auto props = buckets_.Get(bucket);
  if (!props) return BucketRegistry::NotFound(bucket);
  ObjectMeta meta;
  meta.name = name;
  meta.upload_id = upload_id;
  meta.custom = up.custom;
  MergeCustomInto(&meta.custom, extra_custom);
  meta.atime_ns = NowNs();
  auto cksum = Checksummer::Create(props->checksum_type);
  if (!cksum.ok()) return cksum.status();
  std::vector<char> buf(kSegmentBuf);
  std::vector<UniqueFd> fds;  // the parts, open for `through`
  std::vector<FileSegment> segs;
  for (auto& [num, size] : up.parts) {
    meta.chunk_sizes.push_back(size);
    meta.size += size;
    if (!*cksum && !through) continue;
    auto fd = OpenChunk(mps_, bucket, upload_id, num);
    if (!fd.ok()) return fd.status();
    if (*cksum) {
      // Parts may arrive in any order, so the whole-object checksum is computed here, in order.
      AIS_RETURN_IF_ERROR(StreamSegments({FileSegment{fd->get(), 0, size}}, buf, [&cksum](const char* p, size_t n) {
        (*cksum)->Update(p, n);
        return Status::OK();
      }));
    }
    segs.push_back(FileSegment{fd->get(), 0, size});
    fds.push_back(std::move(*fd));
  }
  if (*cksum) {
    meta.cksum_type = props->checksum_type;
    meta.cksum_value = (*cksum)->FinishHex();
  }
  if (through) {
    auto md = through(segs, meta.size);
    if (!md.ok()) return md.status();
    MergeCustomInto(&meta.custom, *md);
  }
  AIS_RETURN_IF_ERROR(commit_.CommitChunked(bucket, up.primary_mp, &meta, std::nullopt));
  if (out) *out = meta;
  up.finished = true;
  commit_.ForgetChunkMarker(up.primary_mp, upload_id);
  std::lock_guard ul(mu_);
  uploads_.erase(upload_id);
  return Status::OK();
}

Status MultipartUploads::KeepOnly(const std::string& bucket, const std::string& name, const std::string& upload_id,
                                  const std::vector<uint32_t>& parts) {
  auto found = Find(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  for (size_t i = 0; i < parts.size(); ++i) {
    if ((i > 0 && parts[i] <= parts[i - 1]) || !up.parts.count(parts[i])) {
      return Status::InvalidArgument(ObjectCname(bucket, name) + ": part " + std::to_string(parts[i]) +
                                     " is not a committed part of upload \"" + upload_id + "\" (or out of order)");
    }
  }
  // Every copy of a dropped part goes first: a part is written on ForChunk's mountpath, or
  // another when that one was disabled, so each mountpath is tried.
  auto unlink_everywhere = [&](uint32_t num) {
    for (size_t m = 0; m < mps_.size(); ++m) ::unlink(mps_.ChunkPath(m, bucket, upload_id, num).c_str());
  };
  const std::set<uint32_t> kept(parts.begin(), parts.end());
  for (const auto& [num, size] : std::map<uint32_t, uint64_t>(up.parts)) {
    if (kept.count(num)) continue;
    unlink_everywhere(num);
    up.parts.erase(num);
    up.tags.erase(num);
  }
  // Ascending, so the k-th kept part (number >= k) moves down onto a number that is free: a
  // dropped part's, or a kept one's already moved. It goes where its new number is placed when
  // that is a rename away (one filesystem), else it keeps its mountpath (reads probe them all).
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto from = parts[i], to = static_cast<uint32_t>(i + 1);
    if (from == to) continue;
    size_t at = mps_.size();
    for (size_t m = 0; m < mps_.size() && at == mps_.size(); ++m) {
      if (::access(mps_.ChunkPath(m, bucket, upload_id, from).c_str(), F_OK) == 0) at = m;
    }
    if (at == mps_.size()) return Status::IOError(ObjectCname(bucket, name) + ": part " + std::to_string(from) + " is missing");
    const std::string path = mps_.ChunkPath(at, bucket, upload_id, from);
    const size_t placed = PartPlace(buckets_, mps_, up, to);
    const bool moved = placed != at && commit_.MakeChunkDir(placed, bucket, upload_id).ok() &&
                       ::rename(path.c_str(), mps_.ChunkPath(placed, bucket, upload_id, to).c_str()) == 0;
    if (!moved && ::rename(path.c_str(), mps_.ChunkPath(at, bucket, upload_id, to).c_str()) != 0) {
      return Status::FromErrno(errno, "rename " + path);
    }
    up.parts[to] = up.parts[from];
    up.tags[to] = std::move(up.tags[from]);
    up.parts.erase(from);
    up.tags.erase(from);
  }
  return Status::OK();
}

Status MultipartUploads::Abort(const std::string& bucket, const std::string& name, const std::string& upload_id) {
  auto found = Find(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  {
    std::lock_guard lock(up.mu);
    if (up.finished) return UploadGone(bucket, name, upload_id);
    up.finished = true;
  }
  commit_.DropChunks(up.primary_mp, bucket, upload_id);
  std::lock_guard ul(mu_);
  uploads_.erase(upload_id);
  return Status::OK();
}

PartWriter::~PartWriter() {
  if (!done_) ::unlink(temp_path_.c_str());
}

Status PartWriter::Write(const void* data, size_t len) {
  if (written_ + len > expected_) return Status::InvalidArgument("body exceeds Content-Length");
  AIS_RETURN_IF_ERROR(WriteAll(fd_.get(), data, len));
  written_ += len;
  return Status::OK();
}

Status PartWriter::Commit(std::string tag) {
  if (written_ != expected_) {
    return Status::InvalidArgument("part " + std::to_string(num_) + ": received " + std::to_string(written_) +
                                   " of " + std::to_string(expected_) + " bytes");
  }
  std::lock_guard lock(upload_->mu);
  if (upload_->finished) return Status::NotFound("upload ID \"" + upload_->id + "\" was already completed or aborted");
  fd_.reset();
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) return Status::FromErrno(errno, "rename part");
  done_ = true;
  upload_->parts[num_] = expected_;
  upload_->tags[num_] = std::move(tag);
  return Status::OK();
}

}  // namespace ais
