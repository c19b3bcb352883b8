// The input is a GetBatch request body (apc.MossReq), decoded by ParseMossRequest
// (api/moss_request.h) without and with a default bucket from the URL path.
//
// Properties: every item of an accepted request names a known bucket and a valid object name,
// its strings lie inside the arena and its range obeys the parse-time rules; the request written
// back as JSON (opaque re-encoded by EncodeBase64) decodes to the same request; base64 of the
// input bytes decodes back to them.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/moss_request.h"
#include "util/base64.h"
#include "fuzz_check.h"
#include "store/names.h"

namespace {

nlohmann::json Encode(const ais::MossRequest& req) {
  nlohmann::json in = nlohmann::json::array();
  for (const auto& it : req.items) {
    const ais::MossBucket& b = req.bucket(it);
    nlohmann::json e = {{"objname", req.objname(it)}, {"bucket", b.name}, {"provider", b.provider}};
    if (!req.archpath(it).empty()) e["archpath"] = req.archpath(it);
    if (!req.opaque(it).empty()) e["opaque"] = ais::EncodeBase64(req.opaque(it));
    if (it.start != 0) e["start"] = it.start;
    if (it.length != 0) e["length"] = it.length;
    in.push_back(std::move(e));
  }
  return {{"mime", req.mime}, {"coer", req.coer}, {"onob", req.onob}, {"strm", req.strm}, {"in", std::move(in)}};
}

void Check(std::string_view body, const std::optional<ais::MossBucket>& dflt) {
  auto r = ais::ParseMossRequest(body, dflt);
  if (!r.ok()) {
    FUZZ_CHECK(!r.status().message().empty());
    return;
  }
  const ais::MossRequest& req = r.value();
  FUZZ_CHECK(!req.items.empty());
  for (const auto& it : req.items) {
    FUZZ_CHECK(it.bucket < req.buckets.size());
    FUZZ_CHECK(ais::ValidateBucketName(req.bucket(it).name).ok());
    FUZZ_CHECK(ais::NormalizeProvider(req.bucket(it).provider).value() == req.bucket(it).provider);
    FUZZ_CHECK(ais::ValidateObjectName(req.objname(it)).ok());
    FUZZ_CHECK(req.objname(it).size() == it.objname.len);
    FUZZ_CHECK(req.archpath(it).size() == it.archpath.len);
    FUZZ_CHECK(req.opaque(it).size() == it.opaque.len);
    FUZZ_CHECK(it.start >= 0 && it.length >= -1 && (it.start == 0 || it.length != 0));
  }
  std::string again = Encode(req).dump();
  auto r2 = ais::ParseMossRequest(again, dflt);
  FUZZ_CHECK(r2.ok());
  const ais::MossRequest& req2 = r2.value();
  FUZZ_CHECK(req2.mime == req.mime && req2.coer == req.coer && req2.onob == req.onob && req2.strm == req.strm);
  FUZZ_CHECK(req2.buckets == req.buckets);
  FUZZ_CHECK(req2.items.size() == req.items.size());
  for (size_t i = 0; i < req.items.size(); ++i) {
    const auto &a = req.items[i], &b = req2.items[i];
    FUZZ_CHECK(a.bucket == b.bucket && a.start == b.start && a.length == b.length);
    FUZZ_CHECK(req.objname(a) == req2.objname(b));
    FUZZ_CHECK(req.archpath(a) == req2.archpath(b));
    FUZZ_CHECK(req.opaque(a) == req2.opaque(b));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  Check(body, std::nullopt);
  Check(body, ais::MossBucket{.provider = "ais", .name = "dflt"});

  FUZZ_CHECK(ais::DecodeBase64(ais::EncodeBase64(body)) == body);
  if (auto dec = ais::DecodeBase64(body)) FUZZ_CHECK(ais::DecodeBase64(ais::EncodeBase64(*dec)) == dec);
  return 0;
}
