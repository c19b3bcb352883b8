// TarIndex: the regular members of an uncompressed tar shard, by name, and the process-wide cache
// that keeps them across requests.
//
// Reading a file out of a shard needs its offset, found by walking the tar headers from the start
// (one read per member). A request that takes files from many shards in an order of its own (a
// shuffled epoch plan) would otherwise walk the same headers again in every request; the cache
// keeps each shard's walk for as long as the object is unchanged: an entry names the object's
// version, size, checksum and write time, and an overwritten object no longer matches it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "archive/shard.h"
#include "store/object_meta.h"

namespace ais {

struct TarIndex {
  std::vector<Shard::Member> members;              // regular files, in archive order
  std::unordered_map<std::string, size_t> by_key;  // Shard::Key(name) -> first member so named

  // What the index holds in memory, about (the cache's budget counts this).
  size_t bytes() const;
};

class TarIndexCache {
 public:
  // Which version of an object an index describes.
  struct Identity {
    uint64_t version = 0;
    uint64_t size = 0;
    int64_t written_ns = 0;
    std::string cksum{};
    bool operator==(const Identity&) const = default;
    static Identity Of(const ObjectMeta& meta);
  };

  explicit TarIndexCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The index of object `key` (bucket and name) if cached for exactly this identity.
  std::shared_ptr<const TarIndex> Get(const std::string& key, const Identity& id);
  // Keeps `index`, dropping the least recently used entries over the budget. An index larger
  // than the budget is not kept.
  void Put(const std::string& key, Identity id, std::shared_ptr<const TarIndex> index);

  size_t bytes() const;

 private:
  struct Entry {
    std::string key;
    Identity id;
    std::shared_ptr<const TarIndex> index;
    size_t bytes = 0;
  };

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key_;  // guarded by mu_
  size_t bytes_ = 0;                                                   // guarded by mu_
};

// The server's cache (64 MiB of indexes: about half a million members).
TarIndexCache& SharedTarIndexes();

}  // namespace ais
