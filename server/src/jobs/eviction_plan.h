// EvictionPlan: which cached objects the lru job evicts, and in which order (AIS space/lru.go).
//
// - What to free: on each filesystem whose used capacity is at or above space.highwm, the bytes
//   above space.lowwm (mountpaths on one filesystem share its figure). Nothing elsewhere.
// - What may go: an object whose last access (read or write) is at least lru.dont_evict_time old,
//   with bytes on a filesystem that still needs freeing. The caller offers only cached objects
//   of remote buckets with lru.enabled: ais:// objects are never offered.
// - Order: least recently accessed first; evicting stops once no filesystem needs more.
// - Bounded: at most max_candidates are kept (the oldest offered); truncated() says that more
//   were offered, so after evicting these the caller walks again if space is still needed.
// No I/O; not thread-safe (one job's own state).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/capacity.h"
#include "store/space_config.h"

namespace ais {

struct EvictionCandidate {
  std::string bucket;  // store key
  std::string name;
  uint64_t version = 0;
  int64_t atime_ns = 0;  // Store::AccessTime
  uint64_t size = 0;
  // Bytes it holds on each mountpath (its object file's, its chunks').
  std::vector<std::pair<size_t, uint64_t>> bytes_on;
};

class EvictionPlan {
 public:
  // `cs`: the capacity now; `num_mountpaths`: Mountpaths::size().
  EvictionPlan(const CapStatus& cs, const SpaceConfig& cfg, size_t num_mountpaths, int64_t now_ns,
               size_t max_candidates);

  // Whether any filesystem needs freeing (else there is nothing to do).
  bool Needed() const;
  // Bytes still to free in all.
  uint64_t bytes_needed() const;
  // Keeps `c` if it may go (see above) and is among the oldest max_candidates offered.
  void Offer(EvictionCandidate c);
  // The kept candidates, least recently accessed first; the plan keeps none after.
  std::vector<EvictionCandidate> TakeOldestFirst();
  // Whether evicting `c` frees bytes on a filesystem that still needs it.
  bool Helps(const EvictionCandidate& c) const;
  // `c` was evicted: its bytes come off what its filesystems need.
  void Evicted(const EvictionCandidate& c);
  bool truncated() const { return truncated_; }

 private:
  const int64_t dont_evict_before_ns_;  // atime must be at or before this
  const size_t max_candidates_;
  std::vector<size_t> fs_of_;   // mountpath -> the first mountpath of its filesystem
  std::vector<uint64_t> need_;  // by that first mountpath: bytes still to free
  std::vector<EvictionCandidate> heap_;  // max-heap by atime: the newest kept is on top
  bool truncated_ = false;
};

}  // namespace ais
