// Store::ResilverObject: one object to where placement wants it now (store.h).
#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "store/bck.h"
#include "store/header_cache.h"
#include "store/store.h"

namespace ais {
namespace {

struct ObjectFileAt {
  size_t mp;
  ObjectMeta meta;
};

// The object files of bucket/name on every mountpath that is read (damaged ones left out: the
// scrub's business).
std::vector<ObjectFileAt> ObjectFilesOf(const Mountpaths& mps, const std::string& bucket, const std::string& name) {
  std::vector<ObjectFileAt> out;
  for (size_t mp = 0, used = mps.size(); mp < used; ++mp) {
    if (!mps.enabled(mp)) continue;
    auto fd = OpenFile(mps.ObjectPath(mp, bucket, name), O_RDONLY);
    if (!fd.ok()) continue;
    uint64_t off = 0;
    auto meta = ReadObjectHeader(fd->get(), &off);
    if (meta.ok() && meta->name == name) out.push_back({mp, std::move(*meta)});
  }
  return out;
}

}  // namespace

Status Store::ResilverObject(const std::string& bucket, const std::string& name, size_t* moved, uint64_t* bytes) {
  *moved = 0;
  *bytes = 0;
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  std::lock_guard lock(committer_.StripeFor(bucket, name));
  const bool mirrored = mirror_.MayHaveCopies(bucket);
  const size_t copies = mirror_.Copies(bucket);
  std::vector<ObjectFileAt> files = ObjectFilesOf(mps_, bucket, name);
  if (files.empty()) {
    if (!mirrored) return Status::OK();  // deleted meanwhile
    size_t written = 0;
    Status st = SyncCopiesLocked(bucket, name, copies, &written);  // restored from a copy, if any
    if (st.IsNotFound()) return Status::OK();
    *moved += written;
    return st;
  }
  const size_t want = mps_.PrimaryFor(bucket, name);
  // The newest object file stays (the one on `want` on a tie); every other one is stale.
  size_t win = 0;
  for (size_t i = 1; i < files.size(); ++i) {
    const ObjectMeta& a = files[i].meta;
    const ObjectMeta& b = files[win].meta;
    if (a.version > b.version || (a.version == b.version && files[i].mp == want)) win = i;
  }
  const ObjectMeta meta = files[win].meta;
  const size_t from = files[win].mp;
  auto drop = [&](const ObjectFileAt& f) -> Status {
    const std::string path = mps_.ObjectPath(f.mp, bucket, name);
    const bool own_chunks = f.meta.chunked() && f.meta.upload_id != meta.upload_id;
    if (own_chunks) AIS_RETURN_IF_ERROR(committer_.WriteChunkMarker(f.mp, bucket, name, f.meta.upload_id));
    ::unlink(path.c_str());
    Headers().ForgetPath(path);
    if (own_chunks) committer_.DropChunks(f.mp, bucket, f.meta.upload_id);
    return Status::OK();
  };
  std::optional<RelocationLog::Move> moving;  // until its copies follow
  if (from != want) moving.emplace(committer_.relocations(), bucket, name);
  for (const auto& f : files) {
    if (f.mp != from) AIS_RETURN_IF_ERROR(drop(f));  // the stale one on `want` first: Move needs it gone
  }
  if (from != want) {
    uint64_t n = 0;
    AIS_RETURN_IF_ERROR(committer_.Move(bucket, mps_.ObjectPath(from, bucket, name), want,
                                        mps_.ObjectPath(want, bucket, name), &n));
    ++*moved;
    *bytes += n;
  }
  // Chunks: each stays where it is while that mountpath takes new data; off a leaving one it
  // goes where a new chunk would (the object's primary in a mirrored bucket).
  for (uint32_t k = 1; meta.chunked() && k <= meta.chunk_sizes.size(); ++k) {
    std::vector<size_t> at;
    for (size_t mp = 0, used = mps_.size(); mp < used; ++mp) {
      if (mps_.enabled(mp) && ::access(mps_.ChunkPath(mp, bucket, meta.upload_id, k).c_str(), F_OK) == 0) at.push_back(mp);
    }
    if (at.empty()) continue;  // lost: the scrub reports it
    const size_t want_k = copies > 1 ? want : mps_.ForChunk(meta.upload_id, k);
    size_t keep = at.front();
    for (size_t mp : at) {
      if (mp == want_k || (!mps_.placeable(keep) && mps_.placeable(mp))) keep = mp;
    }
    if (!mps_.placeable(keep)) {
      uint64_t n = 0;
      AIS_RETURN_IF_ERROR(committer_.Move(bucket, mps_.ChunkPath(keep, bucket, meta.upload_id, k), want_k,
                                          mps_.ChunkPath(want_k, bucket, meta.upload_id, k), &n));
      ++*moved;
      *bytes += n;
      keep = want_k;
    }
    for (size_t mp : at) {  // duplicates a crash left behind
      if (mp != keep) ::unlink(mps_.ChunkPath(mp, bucket, meta.upload_id, k).c_str());
    }
  }
  if (!mirrored) return Status::OK();
  size_t written = 0;
  Status st = SyncCopiesLocked(bucket, name, copies, &written);
  *moved += written;
  *bytes += written * meta.size;
  return st;
}

}  // namespace ais
