#include "store/mountpaths.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "store/bck.h"
#include "store/names.h"

namespace ais {

Mountpaths::Mountpaths(std::vector<std::string> paths) : paths_(std::move(paths)) {
  for (auto& p : paths_) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  }
  std::sort(paths_.begin(), paths_.end());
  for (auto& p : paths_) seeds_.push_back(XXH64(p.data(), p.size(), 0));
  disabled_ = std::make_unique<std::atomic<bool>[]>(paths_.size());
  for (size_t i = 0; i < paths_.size(); ++i) disabled_[i].store(false);
}

Mountpaths::Mountpaths(const Mountpaths& o)
    : paths_(o.paths_), seeds_(o.seeds_), disabled_(std::make_unique<std::atomic<bool>[]>(o.paths_.size())) {
  for (size_t i = 0; i < paths_.size(); ++i) disabled_[i].store(!o.enabled(i));
  num_disabled_.store(o.num_disabled());
}

std::optional<size_t> Mountpaths::Find(std::string_view path) const {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  for (size_t i = 0; i < paths_.size(); ++i) {
    if (paths_[i] == path) return i;
  }
  return std::nullopt;
}

bool Mountpaths::SetEnabled(size_t mp, bool on) const {
  bool was_disabled = disabled_[mp].exchange(!on, std::memory_order_acq_rel);
  if (was_disabled == !on) return false;
  if (on) {
    num_disabled_.fetch_sub(1, std::memory_order_acq_rel);
  } else {
    num_disabled_.fetch_add(1, std::memory_order_acq_rel);
  }
  return true;
}

std::vector<size_t> Mountpaths::Ranked(std::string_view bucket, std::string_view object) const {
  std::string key;
  key.reserve(bucket.size() + object.size() + 1);
  key.append(bucket).push_back('/');
  key.append(object);
  std::vector<std::pair<uint64_t, size_t>> scored;
  scored.reserve(paths_.size());
  for (size_t i = 0; i < paths_.size(); ++i) scored.emplace_back(XXH64(key.data(), key.size(), seeds_[i]), i);
  // Same order as the single best choice below: higher score first, lower index on a tie.
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<size_t> out;
  out.reserve(scored.size());
  for (auto& [score, i] : scored) out.push_back(i);
  return out;
}

size_t Mountpaths::PrimaryFor(std::string_view bucket, std::string_view object) const {
  if (paths_.size() == 1) return 0;
  if (num_disabled() > 0) {
    auto ranked = Ranked(bucket, object);
    for (size_t mp : ranked) {
      if (enabled(mp)) return mp;
    }
    return ranked[0];
  }
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
  auto mp = static_cast<size_t>((start + chunk_num) % paths_.size());
  for (size_t k = 0; k < paths_.size() && !enabled(mp); ++k) mp = (mp + 1) % paths_.size();
  return mp;
}

std::vector<size_t> Mountpaths::MirrorSlots(std::string_view bucket, std::string_view object, size_t primary,
                                            size_t copies) const {
  std::vector<size_t> out;
  if (copies < 2) return out;
  for (size_t mp : Ranked(bucket, object)) {
    if (out.size() + 1 >= copies) break;
    if (mp != primary && enabled(mp)) out.push_back(mp);
  }
  return out;
}

std::string Mountpaths::BucketDir(size_t mp, std::string_view bucket) const {
  // bck.h: an ais bucket's key is its name; a remote bucket's is "<provider>/<name>".
  return paths_[mp] + (IsRemoteKey(bucket) ? "/" : "/ais/") + std::string(bucket);
}

std::string Mountpaths::ObjectsDir(size_t mp, std::string_view bucket) const {
  return BucketDir(mp, bucket) + "/%ob";
}

std::string Mountpaths::ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const {
  return ObjectsDir(mp, bucket) + "/" + ObjectRelPath(object);
}

std::string Mountpaths::MirrorDir(size_t mp, std::string_view bucket) const {
  return BucketDir(mp, bucket) + "/%mi";
}

std::string Mountpaths::MirrorPath(size_t mp, std::string_view bucket, std::string_view object) const {
  return MirrorDir(mp, bucket) + "/" + ObjectRelPath(object);
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

std::string Mountpaths::HeaderSnapshotPath(size_t mp) const { return paths_[mp] + "/.ais.headers"; }

}  // namespace ais
