#include "archive/tar_index.h"

namespace ais {

size_t TarIndex::bytes() const {
  size_t n = sizeof(TarIndex);
  for (const auto& m : members) n += sizeof(Shard::Member) + m.name.capacity() + 64;  // + the map's node
  return n;
}

TarIndexCache::Identity TarIndexCache::Identity::Of(const ObjectMeta& meta) {
  return {.version = meta.version, .size = meta.size, .written_ns = meta.atime_ns, .cksum = meta.cksum_value};
}

std::shared_ptr<const TarIndex> TarIndexCache::Get(const std::string& key, const Identity& id) {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end() || !(it->second->id == id)) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->index;
}

void TarIndexCache::Put(const std::string& key, Identity id, std::shared_ptr<const TarIndex> index) {
  const size_t size = index->bytes() + key.size();
  if (size > max_bytes_) return;
  std::lock_guard lock(mu_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {  // an older version, or a racing request's
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    by_key_.erase(it);
  }
  lru_.push_front(Entry{.key = key, .id = std::move(id), .index = std::move(index), .bytes = size});
  by_key_[key] = lru_.begin();
  bytes_ += size;
  while (bytes_ > max_bytes_) {
    const Entry& last = lru_.back();
    bytes_ -= last.bytes;
    by_key_.erase(last.key);
    lru_.pop_back();
  }
}

size_t TarIndexCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

TarIndexCache& SharedTarIndexes() {
  static TarIndexCache cache(64 << 20);
  return cache;
}

}  // namespace ais
