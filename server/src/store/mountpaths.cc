#include "store/mountpaths.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "store/names.h"

namespace ais {

Mountpaths::Mountpaths(std::vector<std::string> paths) : paths_(std::move(paths)) {
  for (auto& p : paths_) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  }
  std::sort(paths_.begin(), paths_.end());
  for (auto& p : paths_) seeds_.push_back(XXH64(p.data(), p.size(), 0));
}

size_t Mountpaths::PrimaryFor(std::string_view bucket, std::string_view object) const {
  if (paths_.size() == 1) return 0;
  std::string key;
  key.reserve(bucket.size() + object.size() + 1);
  key.append(bucket).push_back('/');
  key.append(object);
  size_t best = 0;
  uint64_t best_score = 0;
  for (size_t i = 0; i < paths_.size(); ++i) {
    uint64_t score = XXH64(key.data(), key.size(), seeds_[i]);
    if (i == 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

size_t Mountpaths::ForChunk(std::string_view upload_id, uint32_t chunk_num) const {
  uint64_t start = XXH64(upload_id.data(), upload_id.size(), 0);
  return static_cast<size_t>((start + chunk_num) % paths_.size());
}

std::string Mountpaths::BucketDir(size_t mp, std::string_view bucket) const {
  return paths_[mp] + "/ais/" + std::string(bucket);
}

std::string Mountpaths::ObjectsDir(size_t mp, std::string_view bucket) const {
  return BucketDir(mp, bucket) + "/%ob";
}

std::string Mountpaths::ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const {
  return ObjectsDir(mp, bucket) + "/" + ObjectRelPath(object);
}

std::string Mountpaths::ChunkDir(size_t mp, std::string_view bucket, std::string_view upload_id) const {
  return BucketDir(mp, bucket) + "/%ch/" + std::string(upload_id);
}

std::string Mountpaths::ChunkPath(size_t mp, std::string_view bucket, std::string_view upload_id,
                                  uint32_t num) const {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "/%04u", num);
  return ChunkDir(mp, bucket, upload_id) + buf;
}

std::string Mountpaths::WorkDir(size_t mp) const { return paths_[mp] + "/.ais.work"; }

std::string Mountpaths::BmdPath(size_t mp) const { return paths_[mp] + "/.ais.bmd.json"; }

}  // namespace ais
