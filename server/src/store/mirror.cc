#include "store/mirror.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "store/bck.h"
#include "util/file.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {

ObjectMeta CopyMeta(const ObjectMeta& meta) {
  ObjectMeta m = meta;
  m.upload_id.clear();
  m.chunk_sizes.clear();
  return m;
}

size_t Mirror::Copies(const std::string& bucket) const {
  auto props = buckets_.Get(bucket);
  return props ? props->copies() : 1;
}

bool Mirror::MayHaveCopies(const std::string& bucket) const {
  auto props = buckets_.Get(bucket);
  return props && props->mirror_used;
}

Status Mirror::WriteTemp(size_t mp, const ObjectMeta& meta, const std::vector<FileSegment>& data, std::string* temp,
                         std::string_view body) {
  const ObjectMeta cm = CopyMeta(meta);
  uint64_t data_offset = 0;
  const std::string header = EncodeObjectHeader(cm, true, &data_offset);
  *temp = mps_.WorkDir(mp) + "/" + RandomId(16) + ".tmp";
  auto fd = OpenFile(*temp, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.status();
  uint64_t pos = data_offset;
  std::vector<char> buf(kSegmentBuf);
  Status st = PwriteAll(fd->get(), header.data(), header.size(), 0);
  if (st.ok()) {
    st = StreamSegments(data, buf, [&](const char* p, size_t n) {
      Status w = PwriteAll(fd->get(), p, n, pos);
      pos += n;
      return w;
    });
  }
  if (st.ok() && !body.empty()) {
    st = PwriteAll(fd->get(), body.data(), body.size(), pos);
    pos += body.size();
  }
  if (st.ok() && pos != data_offset + cm.size) {
    st = Status::Corruption(cm.name + ": copy source holds " + std::to_string(pos - data_offset) +
                            " bytes, not " + std::to_string(cm.size));
  }
  if (st.ok() && volume_.fsync()) st = FsyncFd(fd->get(), *temp);
  if (!st.ok()) ::unlink(temp->c_str());
  return st;
}

Status Mirror::PlaceAt(const std::string& temp, const std::string& path, const std::string& bucket) {
  int rc = -1;
  for (int attempt = 0; attempt < 4; ++attempt) {
    rc = ::rename(temp.c_str(), path.c_str());
    if (rc == 0 || errno != ENOENT) break;
    if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
    AIS_RETURN_IF_ERROR(MkdirAll(DirName(path)));
  }
  if (rc != 0) return Status::FromErrno(errno, "rename " + temp + " " + path);
  if (volume_.fsync()) return FsyncDir(DirName(path));
  return Status::OK();
}

Status Mirror::Prepare(const std::string& bucket, size_t primary, const ObjectMeta& meta,
                       const std::vector<FileSegment>& data, std::string_view body, PreparedCopies* out) {
  const size_t copies = Copies(bucket);
  if (copies < 2) return Status::OK();
  std::vector<size_t> slots = mps_.MirrorSlots(bucket, meta.name, primary, copies);
  for (size_t i = 0; i < slots.size(); ++i) {
    std::string temp;
    Status st = WriteTemp(slots[i], meta, data, &temp, body);
    if (st.ok()) {
      out->mps.push_back(slots[i]);
      out->temps.push_back(std::move(temp));
      continue;
    }
    // A dying or vanished disk: once the health check disables it, the next slot takes the copy.
    if (st.code() != Status::Code::kNoSpace && !volume_.Check(slots[i])) {
      for (size_t m : mps_.MirrorSlots(bucket, meta.name, primary, copies)) {
        if (std::find(slots.begin(), slots.end(), m) == slots.end()) {
          slots.push_back(m);
          break;
        }
      }
      continue;
    }
    Drop(*out);
    return st;
  }
  return Status::OK();
}

void Mirror::Place(const std::string& bucket, const std::string& name, PreparedCopies& prepared) {
  std::vector<size_t> placed;
  bool degraded = false;
  for (size_t i = 0; i < prepared.mps.size(); ++i) {
    Status st = PlaceAt(prepared.temps[i], mps_.MirrorPath(prepared.mps[i], bucket, name), bucket);
    if (st.ok()) {
      placed.push_back(prepared.mps[i]);
      continue;
    }
    ::unlink(prepared.temps[i].c_str());
    LogWarning(ObjectCname(bucket, name) + ": copy on " + mps_.path(prepared.mps[i]) + " not placed: " + st.message());
    degraded = true;
  }
  prepared = {};
  RemoveCopies(bucket, name, placed);  // also one next to the object (placement moved it there)
  if (degraded && on_degraded_) on_degraded_(bucket, name);
}

void Mirror::Drop(PreparedCopies& prepared) {
  for (const auto& t : prepared.temps) ::unlink(t.c_str());
  prepared = {};
}

size_t Mirror::RemoveCopies(const std::string& bucket, const std::string& name, const std::vector<size_t>& keep) {
  size_t removed = 0;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp) || std::find(keep.begin(), keep.end(), mp) != keep.end()) continue;
    const std::string path = mps_.MirrorPath(mp, bucket, name);
    if (::unlink(path.c_str()) != 0) continue;
    ++removed;
    // Best effort: prune now-empty parent directories.
    const std::string root = mps_.MirrorDir(mp, bucket);
    for (std::string dir = DirName(path); dir.size() > root.size(); dir = DirName(dir)) {
      if (::rmdir(dir.c_str()) != 0) break;
    }
  }
  return removed;
}

}  // namespace ais
