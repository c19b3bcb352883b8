// The input is the value of a multi-object request (apc.ListRange: {"objnames": [...]} or
// {"template": "shard-{0000..0999}.tar"}), decoded by ObjectSelection::FromJson
// (jobs/object_selection.h).
//
// Properties: a list keeps its names in order; a range template expands to exactly Count()
// names (checked up to a bound), each starting with the prefix; a prefix selection names a
// valid prefix.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.h"
#include "jobs/object_selection.h"
#include "store/names.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace {

constexpr uint64_t kExpandMax = 2000;

}  // namespace

// Keys match case-insensitively, as Go's decoder (and JsonFields) matches them.
static bool HasKey(const nlohmann::json& j, std::string_view key) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (ais::IEquals(it.key(), key)) return true;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = ais::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  const nlohmann::json& j = *parsed;
  auto sel = ais::ObjectSelection::FromJson(j);
  if (!sel.ok()) return 0;
  (void)sel->Describe();
  switch (sel->kind()) {
    case ais::ObjectSelection::Kind::kList:
      FUZZ_CHECK(!sel->names().empty());
      FUZZ_CHECK(j.is_object() && HasKey(j, "objnames"));
      for (const auto& n : sel->names()) FUZZ_CHECK(ais::ValidateObjectName(n).ok());
      break;
    case ais::ObjectSelection::Kind::kPrefix:
      FUZZ_CHECK(sel->tmpl().ranges.empty());
      FUZZ_CHECK(ais::ValidatePrefix(sel->tmpl().prefix).ok());
      break;
    case ais::ObjectSelection::Kind::kRange: {
      const ais::NameTemplate& t = sel->tmpl();
      FUZZ_CHECK(!t.ranges.empty());
      uint64_t count = t.Count();
      FUZZ_CHECK(count >= 1);
      uint64_t n = 0;
      t.Expand([&](const std::string& name) {
        FUZZ_CHECK(name.starts_with(t.prefix));
        return ++n < kExpandMax;
      });
      FUZZ_CHECK(n == std::min(count, kExpandMax));
      break;
    }
  }
  return 0;
}
