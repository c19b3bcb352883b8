#include "jobs/object_selection.h"

#include <charconv>

#include "store/names.h"
#include "util/json_fields.h"

namespace ais {
namespace {

constexpr size_t kMaxListNames = 1 << 20;  // names in one objnames list

std::string InvalidBash(std::string_view t) {
  return "invalid 'bash' template \"" + std::string(t) + "\" (expecting e.g. 'prefix-{0001..0010..1}-suffix')";
}

Result<int64_t> ParseNum(std::string_view s, std::string_view tmpl) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return Status::InvalidArgument(InvalidBash(tmpl));
  return v;
}

Status CheckBounds(std::string_view typ, std::string_view tmpl, const NameTemplate::Range& r) {
  std::string head = "invalid '" + std::string(typ) + "' template \"" + std::string(tmpl) + "\": ";
  if (r.start > r.end) return Status::InvalidArgument(head + "'start' cannot be greater than 'end'");
  if (r.start < 0) return Status::InvalidArgument(head + "'start' is negative");
  if (r.step <= 0) return Status::InvalidArgument(head + "'step' is non-positive");
  return Status::OK();
}

Result<NameTemplate> ParseBash(std::string_view tmpl) {
  NameTemplate t;
  auto left = tmpl.find('{');
  auto last_right = tmpl.rfind('}');
  if (last_right == std::string_view::npos || last_right < left) return Status::InvalidArgument(InvalidBash(tmpl));
  t.prefix = std::string(tmpl.substr(0, left));
  std::string_view rest = tmpl;
  while ((left = rest.find('{')) != std::string_view::npos) {
    auto right = rest.find('}');
    if (right == std::string_view::npos || right < left) return Status::InvalidArgument(InvalidBash(tmpl));
    std::string_view inside = rest.substr(left + 1, right - left - 1);
    std::vector<std::string_view> nums;
    for (size_t pos = 0;;) {
      auto dots = inside.find("..", pos);
      nums.push_back(inside.substr(pos, dots == std::string_view::npos ? std::string_view::npos : dots - pos));
      if (dots == std::string_view::npos) break;
      pos = dots + 2;
    }
    if (nums.size() < 2 || nums.size() > 3) return Status::InvalidArgument(InvalidBash(tmpl));
    NameTemplate::Range r;
    auto start = ParseNum(nums[0], tmpl);
    auto end = ParseNum(nums[1], tmpl);
    if (!start.ok()) return start.status();
    if (!end.ok()) return end.status();
    r.start = *start;
    r.end = *end;
    if (nums.size() == 3) {
      auto step = ParseNum(nums[2], tmpl);
      if (!step.ok()) return step.status();
      r.step = *step;
    }
    r.digits = static_cast<int>(std::min(nums[0].size(), nums[1].size()));
    AIS_RETURN_IF_ERROR(CheckBounds("bash", tmpl, r));
    rest = rest.substr(right + 1);
    auto next = rest.find('{');
    r.gap = std::string(rest.substr(0, next));
    t.ranges.push_back(std::move(r));
  }
  return t;
}

Result<NameTemplate> ParseAt(std::string_view tmpl) {
  NameTemplate t;
  auto left = tmpl.find('@');
  t.prefix = std::string(tmpl.substr(0, left));
  std::string_view rest = tmpl;
  while ((left = rest.find('@')) != std::string_view::npos) {
    size_t i = left + 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    std::string_view number = rest.substr(left + 1, i - left - 1);
    if (number.empty()) {
      return Status::InvalidArgument("invalid 'at' template \"" + std::string(tmpl) +
                                     "\" (expecting e.g. 'prefix-@00100-suffix')");
    }
    NameTemplate::Range r;
    auto end = ParseNum(number, tmpl);
    if (!end.ok()) return end.status();
    r.end = *end;
    r.digits = static_cast<int>(number.size());
    AIS_RETURN_IF_ERROR(CheckBounds("at", tmpl, r));
    rest = rest.substr(i);
    r.gap = std::string(rest.substr(0, rest.find('@')));
    t.ranges.push_back(std::move(r));
  }
  return t;
}

std::string Padded(int64_t v, int digits) {
  std::string s = std::to_string(v);
  if (static_cast<int>(s.size()) < digits) s.insert(0, static_cast<size_t>(digits) - s.size(), '0');
  return s;
}

}  // namespace

Result<NameTemplate> NameTemplate::Parse(std::string_view tmpl) {
  if (tmpl.find('{') != std::string_view::npos) return ParseBash(tmpl);
  if (tmpl.find('@') != std::string_view::npos) return ParseAt(tmpl);
  if (tmpl.find('%') != std::string_view::npos) {
    return Status::InvalidArgument("invalid template \"" + std::string(tmpl) +
                                   "\": 'fmt' style (%d) is not supported for multi-object operations");
  }
  NameTemplate t;
  t.prefix = std::string(tmpl);
  return t;
}

uint64_t NameTemplate::Count() const {
  uint64_t n = 1;
  for (const auto& r : ranges) {
    uint64_t k = static_cast<uint64_t>((r.end - r.start) / r.step + 1);
    n = (k != 0 && n > UINT64_MAX / k) ? UINT64_MAX : n * k;
  }
  return n;
}

void NameTemplate::Expand(const std::function<bool(const std::string&)>& fn) const {
  if (ranges.empty()) return;
  std::vector<int64_t> at;
  for (const auto& r : ranges) at.push_back(r.start);
  for (;;) {
    std::string name = prefix;
    for (size_t i = 0; i < ranges.size(); ++i) name += Padded(at[i], ranges[i].digits) + ranges[i].gap;
    if (!fn(name)) return;
    size_t i = ranges.size();
    for (;;) {  // odometer: bump the last range, carry left
      if (i == 0) return;
      --i;
      if (at[i] <= ranges[i].end - ranges[i].step) {
        at[i] += ranges[i].step;
        break;
      }
      at[i] = ranges[i].start;
    }
  }
}

Result<ObjectSelection> ObjectSelection::From(std::string tmpl, std::vector<std::string> names) {
  ObjectSelection sel;
  if (!names.empty()) {
    if (!tmpl.empty()) return Status::InvalidArgument("invalid list-range message: both objnames and template given");
    if (names.size() > kMaxListNames) {
      return Status::InvalidArgument("too many object names (" + std::to_string(names.size()) + ", max " +
                                     std::to_string(kMaxListNames) + ")");
    }
    for (const auto& n : names) AIS_RETURN_IF_ERROR(ValidateObjectName(n));
    sel.names_ = std::move(names);
    sel.kind_ = Kind::kList;
    return sel;
  }
  if (tmpl == "*") tmpl.clear();
  auto parsed = NameTemplate::Parse(tmpl);
  if (!parsed.ok()) return parsed.status();
  sel.tmpl_ = std::move(*parsed);
  AIS_RETURN_IF_ERROR(ValidatePrefix(sel.tmpl_.prefix));
  sel.kind_ = sel.tmpl_.ranges.empty() ? Kind::kPrefix : Kind::kRange;
  return sel;
}

Result<ObjectSelection> ObjectSelection::FromJson(const nlohmann::json& value) {
  std::string tmpl;
  std::vector<std::string> names;
  JsonFields f(value, "value");
  f.Str("template", &tmpl).StrList("objnames", &names);
  AIS_RETURN_IF_ERROR(f.Finish());
  return From(std::move(tmpl), std::move(names));
}

std::string ObjectSelection::Describe() const {
  switch (kind_) {
    case Kind::kList: {
      std::string s = "objnames:[";
      for (size_t i = 0; i < names_.size() && i < 8; ++i) s += (i ? " " : "") + names_[i];
      if (names_.size() > 8) s += " ...(" + std::to_string(names_.size()) + ")";
      return s + "]";
    }
    case Kind::kRange: {
      std::string s = "template:" + tmpl_.prefix;
      for (const auto& r : tmpl_.ranges) {
        s += "{" + Padded(r.start, r.digits) + ".." + Padded(r.end, r.digits) + ".." + std::to_string(r.step) + "}" +
             r.gap;
      }
      return s;
    }
    case Kind::kPrefix: return "prefix:" + tmpl_.prefix;
  }
  return "";
}

Status ObjectSelection::ForEach(Store& store, const std::string& bucket, const std::function<bool()>& stop,
                                const std::function<Status(const std::string& name)>& fn) const {
  auto props = store.GetBucket(bucket);
  if (!props.ok()) return props.status();
  if (kind_ == Kind::kList) {
    for (const auto& n : names_) {
      if (stop()) return Status::OK();
      AIS_RETURN_IF_ERROR(fn(n));
    }
    return Status::OK();
  }
  if (kind_ == Kind::kRange) {
    Status st;
    tmpl_.Expand([&](const std::string& name) {
      if (stop()) return false;
      st = fn(name);
      return st.ok();
    });
    return st;
  }
  ObjectWalk walk{.prefix = tmpl_.prefix, .after = {}, .headers = true, .stop = stop};
  return store.ForEachObject(bucket, walk, [&fn](const WalkedObject& obj) { return fn(obj.name()); });
}

}  // namespace ais
