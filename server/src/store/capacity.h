// Capacity: how full each mountpath's filesystem is, the space config that says what is too
// full, and the refusal of writes above out_of_space (AIS fs.CapStatus, cmn.ErrCapExceeded).
//
// Invariants:
// - Figures are AIS's (fs getCapacity): per filesystem (statvfs), used = (blocks - bavail) *
//   bsize, avail = bavail * bsize, pct_used = used blocks * 100 / blocks, rounded up from one
//   point below highwm on; mountpaths on one filesystem count once in the totals.
// - A write (Store::BeginPut, a multipart part, an append) is refused with kNoSpace (507) while
//   any enabled mountpath is above out_of_space; reads are never refused. The check uses a
//   status at most kFreshFor old, refreshed on every check once used capacity is above cleanupwm.
// - A refresh that finds a mountpath above highwm calls the on-high hook (the space monitor,
//   which starts the lru job), outside any lock here.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "store/mountpaths.h"
#include "store/space_config.h"
#include "util/status.h"

namespace ais {

// One mountpath's filesystem (AIS fs.CDF's capacity part).
struct MountpathCapacity {
  size_t mp = 0;
  uint64_t used = 0;   // bytes
  uint64_t avail = 0;  // bytes
  uint64_t blocks_total = 0;  // bytes the filesystem has (used + free, reserved included)
  int32_t pct_used = 0;
  uint64_t fsid = 0;        // statvfs f_fsid
  bool shared = false;      // another mountpath before it is on the same filesystem
};

// AIS fs.CapStatus: the enabled mountpaths' capacity and the totals.
struct CapStatus {
  int64_t high_wm = 0;
  int64_t out_of_space = 0;
  uint64_t total_used = 0;
  uint64_t total_avail = 0;
  int32_t pct_max = 0, pct_avg = 0, pct_min = 0;
  std::vector<MountpathCapacity> mountpaths;

  bool IsOOS() const { return pct_max > out_of_space; }
  bool OverHigh() const { return pct_max > high_wm; }
  // AIS ErrCapExceeded's text ("out of space: used 96% of total capacity on at least one of the
  // mountpaths (total used 61.4MiB out of 64MiB)", or "low on free space: ..." above highwm);
  // "" while at or below highwm.
  std::string ErrText() const;
};

class Capacity {
 public:
  static constexpr std::chrono::milliseconds kFreshFor{1000};

  Capacity(const Mountpaths& mps, std::chrono::milliseconds min_dont_evict)
      : mps_(mps), min_dont_evict_(min_dont_evict) {}
  Capacity(const Capacity&) = delete;
  Capacity& operator=(const Capacity&) = delete;

  SpaceConfig config() const;
  // Validates, then sets (kInvalidArgument naming the field; nothing changes then).
  Status SetConfig(const SpaceConfig& c);
  std::chrono::milliseconds min_dont_evict() const { return min_dont_evict_; }

  // statvfs of every enabled mountpath now; above highwm, calls the on-high hook if `notify`.
  CapStatus Refresh(bool notify = true);
  // The last status, refreshed when older than kFreshFor.
  CapStatus Get();
  // kNoSpace with AIS's text while a mountpath is above out_of_space (see the invariants).
  Status CheckWrite();

  // `hook` is called after a refresh found a mountpath above highwm (outside the lock; a call
  // may still run after the hook is replaced: it must stay safe to call).
  void SetOnHigh(std::function<void()> hook);

  // What the lru job evicted since the start (AIS tracker lru.evict.n, lru.evict.size).
  void AddEvicted(uint64_t objects, uint64_t bytes);
  uint64_t evicted_objects() const;
  uint64_t evicted_bytes() const;

 private:
  const Mountpaths& mps_;
  const std::chrono::milliseconds min_dont_evict_;
  mutable std::mutex mu_;
  std::function<void()> on_high_;                    // guarded by mu_
  SpaceConfig config_;                              // guarded by mu_
  CapStatus last_;                                  // guarded by mu_
  std::chrono::steady_clock::time_point last_at_{};  // guarded by mu_
  uint64_t evicted_objects_ = 0, evicted_bytes_ = 0;  // guarded by mu_
};

}  // namespace ais
