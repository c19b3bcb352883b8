// The input is the body of a list-objects request: the action message {"action":"list",
// "value":{LsoMsg}} the SDKs send (or a bare LsoMsg), decoded by ListObjectsMsg::FromJson and its
// props list by ListProps::Parse (api/object_list.h).
//
// Property: a decoded message written back as JSON (as the official SDK writes it) decodes to
// the same message.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <nlohmann/json.hpp>
#include <string>

#include "api/object_list.h"
#include "fuzz_check.h"
#include "util/json_fields.h"

namespace {

void Check(const nlohmann::json& v) {
  auto m = ais::ListObjectsMsg::FromJson(v);
  if (!m.ok()) return;
  (void)ais::ListProps::Parse(m->props);
  nlohmann::json again = {{"prefix", m->prefix},         {"props", m->props},
                          {"pagesize", m->page_size},    {"continuation_token", m->continuation_token},
                          {"uuid", m->uuid},             {"flags", m->flags},
                          {"start_after", m->start_after}};
  auto m2 = ais::ListObjectsMsg::FromJson(again);
  FUZZ_CHECK(m2.ok());
  FUZZ_CHECK(m2->prefix == m->prefix);
  FUZZ_CHECK(m2->props == m->props);
  FUZZ_CHECK(m2->page_size == m->page_size);
  FUZZ_CHECK(m2->continuation_token == m->continuation_token);
  FUZZ_CHECK(m2->uuid == m->uuid);
  FUZZ_CHECK(m2->flags == m->flags);
  FUZZ_CHECK(m2->start_after == m->start_after);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = ais::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  const nlohmann::json& j = *parsed;
  Check(j);
  if (j.is_object()) {
    if (auto it = j.find("value"); it != j.end()) Check(*it);
  }
  return 0;
}
