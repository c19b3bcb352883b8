// SpaceConfig: AIS's `space` and `lru` sections of the cluster config (cmn.SpaceConf,
// cmn.LRUConf), as set-config takes them and the cluster config shows them.
//
//   space.cleanupwm     used capacity (%) above which a write runs the space cleanup
//   space.lowwm         eviction frees space down to this used capacity (%)
//   space.highwm        used capacity (%) on any mountpath above which the lru job evicts
//   space.out_of_space  used capacity (%) above which new writes are refused (507)
//   lru.enabled         the default a new remote bucket takes for its own lru.enabled
//   lru.dont_evict_time an object accessed (read or written) this recently is never evicted
//   lru.capacity_upd_time  the longest period between two capacity checks
//
// Valid (AIS SpaceConf/LRUConf.Validate): 0 < cleanupwm <= lowwm <= highwm <= out_of_space <= 100,
// capacity_upd_time >= 10s, dont_evict_time >= the server's floor (AIS: 1h; --lru-min-dont-evict).
// A value of 0 for a duration means AIS's default, as in AIS.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "util/json_fields.h"
#include "util/status.h"

namespace ais {

struct SpaceConfig {
  static constexpr std::chrono::milliseconds kDefaultDontEvictTime = std::chrono::hours(2);
  static constexpr std::chrono::milliseconds kDefaultCapacityUpdTime = std::chrono::minutes(10);
  static constexpr std::chrono::milliseconds kMinCapacityUpdTime = std::chrono::seconds(10);
  static constexpr std::chrono::milliseconds kAisMinDontEvictTime = std::chrono::hours(1);

  int64_t cleanup_wm = 65;
  int64_t low_wm = 75;
  int64_t high_wm = 90;
  int64_t out_of_space = 95;
  bool lru_enabled = true;  // AIS deployments ship it on; ais:// buckets never take it
  std::chrono::milliseconds dont_evict_time = kDefaultDontEvictTime;
  std::chrono::milliseconds capacity_upd_time = kDefaultCapacityUpdTime;

  // The sections as AIS's cluster config shows them.
  nlohmann::json SpaceJson() const;
  nlohmann::json LruJson() const;

  // Read AIS ConfigToSet sections into this config: `space` ({"cleanupwm","lowwm","highwm",
  // "out_of_space"}) and `lru` ({"enabled","dont_evict_time","capacity_upd_time"}). Percentages
  // may come as JSON numbers or decimal strings, durations as Go duration strings; a misfit or an
  // unknown key fails `f` naming the field ("value.space.highwm"). The whole is checked by Validate.
  void ReadSpace(JsonFields& f);
  void ReadLru(JsonFields& f);
  // One dotted key from a query (`space.highwm=80`, `lru.dont_evict_time=1h`); *known is false
  // (and nothing changes) for a key outside these two sections.
  Status SetKey(std::string_view key, std::string_view value, bool* known);
  // The whole config's rules (see above); kInvalidArgument naming the first field off.
  Status Validate(std::chrono::milliseconds min_dont_evict) const;
};

}  // namespace ais
