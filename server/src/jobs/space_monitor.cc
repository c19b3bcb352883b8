#include "jobs/space_monitor.h"

#include <algorithm>

#include "jobs/maintenance_jobs.h"
#include "util/clock.h"
#include "util/log_ring.h"

namespace ais {

SpaceMonitor::SpaceMonitor(Store& store, JobRegistry& jobs) : store_(store), jobs_(jobs) {
  store_.capacity().SetOnHigh([signal = signal_] {
    std::lock_guard lock(signal->mu);
    signal->wake = true;
    signal->cv.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
}

SpaceMonitor::~SpaceMonitor() {
  store_.capacity().SetOnHigh(nullptr);
  {
    std::lock_guard lock(signal_->mu);
    signal_->stop = true;
    signal_->cv.notify_one();
  }
  thread_.join();
}

std::chrono::milliseconds SpaceMonitor::NextCheckIn(int32_t pct_max, const SpaceConfig& cfg) {
  const int64_t umin = std::min(cfg.low_wm - 5, cfg.cleanup_wm);
  const int64_t umax = std::min(cfg.out_of_space - 5, cfg.high_wm);
  const auto tmax = cfg.capacity_upd_time;
  const auto tmin = std::min(kStatsTime, tmax);
  const int64_t util = pct_max;
  if (util <= umin) return tmax;
  if (util >= umax - 1 || umax <= umin) return tmin;
  const int64_t ratio = (util - umin) * 100 / (umax - umin);
  return (100 - ratio) * (tmax - tmin) / 100 + tmin;
}

void SpaceMonitor::Loop() {
  for (;;) {
    const CapStatus cs = store_.capacity().Refresh(/*notify=*/false);
    if (cs.OverHigh()) MaybeStartLru();
    const auto next = NextCheckIn(cs.pct_max, store_.capacity().config());
    std::unique_lock lock(signal_->mu);
    signal_->cv.wait_for(lock, next, [this] { return signal_->stop || signal_->wake; });
    if (signal_->stop) return;
    signal_->wake = false;
  }
}

void SpaceMonitor::MaybeStartLru() {
  if (!jobs_.Query("", "lru", "", true).empty()) return;  // one runs (ours or a client's)
  if (!last_lru_.empty()) {
    auto last = jobs_.Get(last_lru_);
    const int64_t gap_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kMinLruGap).count();
    // One that freed nothing (nothing left that may go) is not followed at once by another.
    if (last && (last->running() || (last->objs == 0 && NowNs() - last->end_ns < gap_ns))) return;
  }
  Store& store = store_;
  JobOptions opts;
  opts.ctlmsg = "used capacity above the high watermark";
  LogWarning("space: used capacity above space.highwm, starting lru: " + store.capacity().Get().ErrText());
  last_lru_ = jobs_.Start("lru", "", [&store](JobControl& jc) { return RunLru(store, jc, {}); }, std::move(opts));
}

}  // namespace ais
