// The AIS control messages: any body through ParseJson (size and depth limits as the server has
// them) and ActionMsg, then its value through every action's decoder. Properties: nothing
// crashes or throws; decoding is deterministic; what decodes keeps the bounds the decoders promise.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/ais_messages.h"
#include "fuzz_check.h"
#include "util/json_fields.h"

namespace {

void DecodeValue(const nlohmann::json& v) {
  for (const char* action : {"copy-listrange", "archive", "delete-listrange", "prefetch-listrange"}) {
    auto m = ais::MultiObjMsg::Decode(action, v);
    auto again = ais::MultiObjMsg::Decode(action, v);
    FUZZ_CHECK(m.ok() == again.ok());
    if (m.ok()) {
      FUZZ_CHECK(m->objnames == again->objnames && m->tmpl == again->tmpl);
      for (const auto& n : m->objnames) FUZZ_CHECK(n.size() <= ais::DefaultJsonLimits().max_string);
    } else {
      FUZZ_CHECK(m.status().code() == ais::Status::Code::kInvalidArgument);
    }
  }
  (void)ais::CopyMsg::Decode(v);
  (void)ais::SummaryMsg::Decode(v);
  (void)ais::PromoteMsg::Decode(v);
  if (auto r = ais::RechunkMsg::Decode(v); r.ok()) FUZZ_CHECK(r->prefix.size() <= ais::DefaultJsonLimits().max_string);
  if (auto b = ais::BlobMsg::Decode(v); b.ok()) FUZZ_CHECK(b->num_workers >= -1 && b->num_workers <= 1024);
  if (auto x = ais::XactMsg::Decode(v, "value"); x.ok()) {
    for (const auto& b : x->buckets) (void)b.CheckServed("buckets");
  }
  if (auto parts = ais::DecodeMptParts(v, 9999); parts.ok()) {
    for (uint32_t n : *parts) FUZZ_CHECK(n >= 1 && n <= 9999);
  }
  if (auto md = ais::DecodeCustomMd(v); md.ok()) {
    for (const auto& [k, val] : *md) FUZZ_CHECK(!k.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto body = ais::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!body.ok()) {
    FUZZ_CHECK(body.status().code() == ais::Status::Code::kInvalidArgument);
    return 0;
  }
  if (auto q = ais::XactMsg::Decode(*body, ""); q.ok()) (void)q->bck.CheckServed("bck");
  auto msg = ais::ActionMsg::Decode(*body);
  if (!msg.ok()) {
    FUZZ_CHECK(msg.status().code() == ais::Status::Code::kInvalidArgument);
    return 0;
  }
  (void)msg->CheckNoValue();
  DecodeValue(msg->value);
  return 0;
}
