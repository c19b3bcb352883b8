// SpaceMonitor: the background capacity check (AIS fs.CapPeriodic and the target's OOS
// handling): it refreshes the mountpaths' capacity, sooner the fuller they are, and when a
// filesystem is above space.highwm it starts the lru job (jobs/maintenance_jobs.h), which
// evicts down to space.lowwm.
//
// Invariants:
// - The period runs from lru.capacity_upd_time (at or below min(lowwm - 5, cleanupwm)) down to
//   kStatsTime (from min(out_of_space - 5, highwm) - 1 up), linearly between, as AIS's.
// - A write that finds used capacity above highwm (Capacity's on-high hook) wakes it at once.
// - At most one lru job runs at a time, and one the monitor started that evicted nothing is
//   followed by another no sooner than kMinLruGap after it ended: a cache with nothing left to
//   evict is not walked over and over.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "jobs/job_registry.h"
#include "store/store.h"

namespace ais {

class SpaceMonitor {
 public:
  static constexpr std::chrono::milliseconds kStatsTime{10000};  // AIS periodic.stats_time
  static constexpr std::chrono::milliseconds kMinLruGap{10000};

  // Starts the thread and hooks the store's capacity checks. REQUIRES: `store` and `jobs`
  // outlive this.
  SpaceMonitor(Store& store, JobRegistry& jobs);
  ~SpaceMonitor();  // stops the thread (a running lru job is the registry's)
  SpaceMonitor(const SpaceMonitor&) = delete;
  SpaceMonitor& operator=(const SpaceMonitor&) = delete;

  // The period until the next check at `pct_max` used (AIS CapStatus._next).
  static std::chrono::milliseconds NextCheckIn(int32_t pct_max, const SpaceConfig& cfg);

 private:
  void Loop();
  // Starts the lru job unless one runs or the last one ended less than kMinLruGap ago.
  void MaybeStartLru();

  // What wakes the thread. Shared with the capacity hook, which may still be running on another
  // thread (a write, a job) while this monitor goes: it then wakes nothing, harmlessly.
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;  // guarded by mu
    bool wake = false;  // guarded by mu
  };

  Store& store_;
  JobRegistry& jobs_;
  const std::shared_ptr<Signal> signal_ = std::make_shared<Signal>();
  std::string last_lru_;  // the job it started last; the thread's own
  std::thread thread_;    // last: starts once the rest is built
};

}  // namespace ais
