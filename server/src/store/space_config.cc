#include "store/space_config.h"

#include <string>

#include "util/go_duration.h"
#include "util/strings.h"

namespace ais {
namespace {

// A watermark: a percentage, as a JSON integer or its decimal string.
void ReadPercent(JsonFields& f, std::string_view key, int64_t* out) {
  const nlohmann::json* v = nullptr;
  f.Raw(key, &v);
  if (!v) return;
  std::optional<uint64_t> n;
  if (v->is_number_unsigned()) n = v->get<uint64_t>();
  if (v->is_string()) n = ParseUint(v->get<std::string>());
  if (!n || *n > 100) {
    f.Fail(key, "expecting a percentage (0-100), got " + v->dump().substr(0, 64));
    return;
  }
  *out = static_cast<int64_t>(*n);
}

// A Go duration string ("2h", "90m", "10s"); 0 means AIS's default (`dflt`).
void ReadDuration(JsonFields& f, std::string_view key, std::chrono::milliseconds dflt, std::chrono::milliseconds* out) {
  std::string text;
  f.Str(key, &text);
  if (text.empty()) return;
  auto d = ParseGoDuration(text);
  if (!d.ok()) {
    f.Fail(key, d.status().message());
    return;
  }
  *out = d->count() == 0 ? dflt : *d;
}

std::string Pct(int64_t v) { return std::to_string(v); }

}  // namespace

nlohmann::json SpaceConfig::SpaceJson() const {
  return {{"cleanupwm", cleanup_wm}, {"lowwm", low_wm}, {"highwm", high_wm}, {"out_of_space", out_of_space}};
}

nlohmann::json SpaceConfig::LruJson() const {
  return {{"dont_evict_time", FormatGoDuration(dont_evict_time)},
          {"capacity_upd_time", FormatGoDuration(capacity_upd_time)},
          {"enabled", lru_enabled}};
}

void SpaceConfig::ReadSpace(JsonFields& f) {
  ReadPercent(f, "cleanupwm", &cleanup_wm);
  ReadPercent(f, "lowwm", &low_wm);
  ReadPercent(f, "highwm", &high_wm);
  ReadPercent(f, "out_of_space", &out_of_space);
}

void SpaceConfig::ReadLru(JsonFields& f) {
  f.Bool("enabled", &lru_enabled);
  ReadDuration(f, "dont_evict_time", kDefaultDontEvictTime, &dont_evict_time);
  ReadDuration(f, "capacity_upd_time", kDefaultCapacityUpdTime, &capacity_upd_time);
}

Status SpaceConfig::SetKey(std::string_view key, std::string_view value, bool* known) {
  *known = true;
  const std::string text(value);
  nlohmann::json section = nlohmann::json::object();
  std::string_view field;
  if (key.starts_with("space.")) {
    field = key.substr(6);
    section[std::string(field)] = text;
  } else if (key.starts_with("lru.")) {
    field = key.substr(4);
    if (field == "enabled") {
      if (IEquals(text, "true")) section["enabled"] = true;
      else if (IEquals(text, "false")) section["enabled"] = false;
      else return Status::InvalidArgument("invalid lru.enabled \"" + text.substr(0, 32) + "\" (expecting true or false)");
    } else {
      section[std::string(field)] = text;
    }
  } else {
    *known = false;
    return Status::OK();
  }
  const bool space = key.starts_with("space.");
  JsonFields f(section, space ? "space" : "lru");
  if (space) ReadSpace(f);
  else ReadLru(f);
  return f.Finish();
}

Status SpaceConfig::Validate(std::chrono::milliseconds min_dont_evict) const {
  const std::string order = " (expecting 0 < cleanupwm <= lowwm <= highwm <= out_of_space <= 100; now cleanupwm=" +
                            Pct(cleanup_wm) + ", lowwm=" + Pct(low_wm) + ", highwm=" + Pct(high_wm) +
                            ", out_of_space=" + Pct(out_of_space) + ")";
  if (cleanup_wm <= 0) return Status::InvalidArgument("invalid space.cleanupwm" + order);
  if (low_wm < cleanup_wm) return Status::InvalidArgument("invalid space.lowwm" + order);
  if (high_wm < low_wm) return Status::InvalidArgument("invalid space.highwm" + order);
  if (out_of_space < high_wm || out_of_space > 100) return Status::InvalidArgument("invalid space.out_of_space" + order);
  if (capacity_upd_time < kMinCapacityUpdTime) {
    return Status::InvalidArgument("invalid lru.capacity_upd_time=" + FormatGoDuration(capacity_upd_time) +
                                   " (expecting lru.capacity_upd_time >= " + FormatGoDuration(kMinCapacityUpdTime) + ")");
  }
  if (dont_evict_time < min_dont_evict) {
    return Status::InvalidArgument("invalid lru.dont_evict_time=" + FormatGoDuration(dont_evict_time) +
                                   " (expecting lru.dont_evict_time >= " + FormatGoDuration(min_dont_evict) + ")");
  }
  return Status::OK();
}

}  // namespace ais
