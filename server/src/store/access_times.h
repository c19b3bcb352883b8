// AccessTimes: when each object was last read, kept in memory so that a GET writes nothing.
//
// An object header's atime is its last write (ObjectMeta::atime_ns); AIS also moves it on every
// read, which would cost a rewrite of the header per GET here (a committed file is never
// written in place: committer.h). Instead reads are recorded here, and an object's access time
// is the later of the two (Store::AccessTime). Eviction (the lru job) is its only reader.
//
// Invariants:
// - Bounded: at most max_entries, in 16 shards by key hash. A full shard drops its older half,
//   which only makes those objects look as old as their header says: they were the least
//   recently read of the shard anyway, so the eviction order stays least-recently-used first.
// - Keyed by a 64-bit hash of bucket and name: a collision can only make an object look more
//   recently read than it was (kept longer), never evicted early.
// - Not persisted: after a restart an object's access time is its last write until it is read.
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace ais {

class AccessTimes {
 public:
  explicit AccessTimes(size_t max_entries = 1 << 21);
  AccessTimes(const AccessTimes&) = delete;
  AccessTimes& operator=(const AccessTimes&) = delete;

  void Touch(std::string_view bucket, std::string_view name, int64_t now_ns);
  // The last Touch of the object, or 0 if none is known.
  int64_t Get(std::string_view bucket, std::string_view name) const;
  void Forget(std::string_view bucket, std::string_view name);
  size_t size() const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<uint64_t, int64_t> last;  // guarded by mu
  };
  static uint64_t KeyOf(std::string_view bucket, std::string_view name);
  Shard& ShardOf(uint64_t key) { return shards_[key % kShards]; }
  const Shard& ShardOf(uint64_t key) const { return shards_[key % kShards]; }
  // Drops the older half of `s`. REQUIRES: s.mu held.
  static void DropOlderHalf(Shard& s);

  const size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace ais
