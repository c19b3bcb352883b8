#include "jobs/eviction_plan.h"

#include <algorithm>
#include <chrono>

namespace ais {
namespace {

bool NewerFirst(const EvictionCandidate& a, const EvictionCandidate& b) { return a.atime_ns < b.atime_ns; }

}  // namespace

EvictionPlan::EvictionPlan(const CapStatus& cs, const SpaceConfig& cfg, size_t num_mountpaths, int64_t now_ns,
                           size_t max_candidates)
    : dont_evict_before_ns_(now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.dont_evict_time).count()),
      max_candidates_(std::max<size_t>(1, max_candidates)),
      fs_of_(num_mountpaths),
      need_(num_mountpaths, 0) {
  for (size_t mp = 0; mp < num_mountpaths; ++mp) fs_of_[mp] = mp;
  for (const MountpathCapacity& c : cs.mountpaths) {
    if (c.mp >= num_mountpaths) continue;
    for (const MountpathCapacity& o : cs.mountpaths) {
      if (o.fsid == c.fsid && o.mp < num_mountpaths) {
        fs_of_[c.mp] = o.mp;  // the first one listed: mountpaths come in index order
        break;
      }
    }
    if (c.shared || c.pct_used < cfg.high_wm) continue;
    const uint64_t low = c.blocks_total / 100 * static_cast<uint64_t>(cfg.low_wm) +
                         c.blocks_total % 100 * static_cast<uint64_t>(cfg.low_wm) / 100;
    need_[c.mp] = c.used > low ? c.used - low : 0;
  }
}

bool EvictionPlan::Needed() const { return bytes_needed() > 0; }

uint64_t EvictionPlan::bytes_needed() const {
  uint64_t n = 0;
  for (uint64_t v : need_) n += v;
  return n;
}

bool EvictionPlan::Helps(const EvictionCandidate& c) const {
  for (const auto& [mp, bytes] : c.bytes_on) {
    if (mp < fs_of_.size() && bytes > 0 && need_[fs_of_[mp]] > 0) return true;
  }
  return false;
}

void EvictionPlan::Offer(EvictionCandidate c) {
  if (c.atime_ns > dont_evict_before_ns_ || !Helps(c)) return;
  if (heap_.size() >= max_candidates_) {
    truncated_ = true;
    if (c.atime_ns >= heap_.front().atime_ns) return;  // newer than every one kept
    std::pop_heap(heap_.begin(), heap_.end(), NewerFirst);
    heap_.pop_back();
  }
  heap_.push_back(std::move(c));
  std::push_heap(heap_.begin(), heap_.end(), NewerFirst);
}

std::vector<EvictionCandidate> EvictionPlan::TakeOldestFirst() {
  std::vector<EvictionCandidate> out = std::move(heap_);
  heap_.clear();
  std::sort(out.begin(), out.end(), NewerFirst);
  return out;
}

void EvictionPlan::Evicted(const EvictionCandidate& c) {
  for (const auto& [mp, bytes] : c.bytes_on) {
    if (mp >= fs_of_.size()) continue;
    uint64_t& need = need_[fs_of_[mp]];
    need = need > bytes ? need - bytes : 0;
  }
}

}  // namespace ais
