#include "store/capacity.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ais {
namespace {

// AIS cos.IEC(n, 2): "61.43MiB", "64.00MiB", "512B".
std::string Iec2(uint64_t n) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return std::to_string(n) + "B";
  double v = static_cast<double>(n);
  size_t u = 0;
  for (v /= 1024; v >= 1024 && u + 1 < std::size(kUnits); v /= 1024) ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%s", v, kUnits[u]);
  return buf;
}

}  // namespace

std::string CapStatus::ErrText() const {
  const std::string suffix = "total used " + Iec2(total_used) + " out of " + Iec2(total_used + total_avail);
  if (IsOOS()) {
    return "out of space: used " + std::to_string(pct_max) +
           "% of total capacity on at least one of the mountpaths (" + suffix + ")";
  }
  if (OverHigh()) {
    return "low on free space: used capacity " + std::to_string(pct_max) + "% exceeded high watermark(" +
           std::to_string(high_wm) + "%) (" + suffix + ")";
  }
  return "";
}

SpaceConfig Capacity::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

Status Capacity::SetConfig(const SpaceConfig& c) {
  AIS_RETURN_IF_ERROR(c.Validate(min_dont_evict_));
  std::lock_guard lock(mu_);
  config_ = c;
  last_at_ = {};  // the next check reads the new watermarks
  return Status::OK();
}

void Capacity::SetOnHigh(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  on_high_ = std::move(hook);
}

CapStatus Capacity::Refresh(bool notify) {
  const SpaceConfig cfg = config();
  CapStatus cs;
  cs.high_wm = cfg.high_wm;
  cs.out_of_space = cfg.out_of_space;
  int64_t pct_sum = 0, counted = 0;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    struct statvfs v{};
    if (::statvfs(mps_.path(mp).c_str(), &v) != 0 || v.f_blocks == 0) continue;
    MountpathCapacity c;
    c.mp = mp;
    c.fsid = v.f_fsid;
    const uint64_t used_blocks = v.f_blocks - v.f_bavail;
    uint64_t pct = used_blocks * 100 / v.f_blocks;
    if (static_cast<int64_t>(pct) >= cfg.high_wm - 1) {  // near the watermark, as AIS: round up
      pct = static_cast<uint64_t>(std::ceil(static_cast<double>(used_blocks) * 100 / static_cast<double>(v.f_blocks)));
    }
    c.used = used_blocks * v.f_frsize;
    c.avail = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
    c.blocks_total = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
    c.pct_used = static_cast<int32_t>(pct);
    c.shared = std::any_of(cs.mountpaths.begin(), cs.mountpaths.end(),
                           [&](const MountpathCapacity& o) { return o.fsid == c.fsid; });
    if (!c.shared) {
      cs.total_used += c.used;
      cs.total_avail += c.avail;
      cs.pct_max = counted == 0 ? c.pct_used : std::max(cs.pct_max, c.pct_used);
      cs.pct_min = counted == 0 ? c.pct_used : std::min(cs.pct_min, c.pct_used);
      pct_sum += c.pct_used;
      ++counted;
    }
    cs.mountpaths.push_back(c);
  }
  cs.pct_avg = counted ? static_cast<int32_t>(pct_sum / counted) : 0;
  std::function<void()> hook;
  {
    std::lock_guard lock(mu_);
    last_ = cs;
    last_at_ = std::chrono::steady_clock::now();
    if (notify && cs.OverHigh()) hook = on_high_;
  }
  if (hook) hook();
  return cs;
}

CapStatus Capacity::Get() {
  {
    std::lock_guard lock(mu_);
    if (last_at_ != std::chrono::steady_clock::time_point{} &&
        std::chrono::steady_clock::now() - last_at_ < kFreshFor) {
      return last_;
    }
  }
  return Refresh();
}

Status Capacity::CheckWrite() {
  CapStatus cs;
  bool refresh = false;
  {
    std::lock_guard lock(mu_);
    refresh = last_at_ == std::chrono::steady_clock::time_point{} || last_.pct_max > config_.cleanup_wm ||
              std::chrono::steady_clock::now() - last_at_ >= kFreshFor;
    if (!refresh) cs = last_;
  }
  if (refresh) cs = Refresh();
  if (cs.IsOOS()) return Status::NoSpace(cs.ErrText());
  return Status::OK();
}

void Capacity::AddEvicted(uint64_t objects, uint64_t bytes) {
  std::lock_guard lock(mu_);
  evicted_objects_ += objects;
  evicted_bytes_ += bytes;
}

uint64_t Capacity::evicted_objects() const {
  std::lock_guard lock(mu_);
  return evicted_objects_;
}

uint64_t Capacity::evicted_bytes() const {
  std::lock_guard lock(mu_);
  return evicted_bytes_;
}

}  // namespace ais
