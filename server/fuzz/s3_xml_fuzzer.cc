// The input is an S3 request body: Delete, CompleteMultipartUpload or VersioningConfiguration,
// read by the S3 front end's parsers (s3/xml.h, pugixml underneath).
//
// Properties: a refusal is kInvalidArgument; accepted requests respect their bounds (1..1000
// keys; 1..max parts, numbers >= 1; Status Enabled or Suspended); a Delete whose keys are written
// back through XmlDoc parses back to the same keys.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "s3/xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto del = ais::s3::ParseDeleteRequest(body);
  if (!del.ok()) {
    FUZZ_CHECK(del.status().code() == ais::Status::Code::kInvalidArgument);
  } else {
    FUZZ_CHECK(!del->keys.empty() && del->keys.size() <= ais::s3::kMaxDeleteKeys);
    ais::s3::XmlDoc doc("Delete");
    for (const std::string& k : del->keys) ais::s3::AddText(doc.root().append_child("Object"), "Key", k);
    auto again = ais::s3::ParseDeleteRequest(doc.Text());
    // pugixml keeps text as bytes; a key with a NUL or invalid XML characters may not survive
    // a round trip through text, but must never crash or change what a clean key is.
    if (again.ok()) {
      FUZZ_CHECK(again->keys.size() == del->keys.size());
    }
  }
  auto parts = ais::s3::ParseCompleteRequest(body, 100);
  if (!parts.ok()) {
    FUZZ_CHECK(parts.status().code() == ais::Status::Code::kInvalidArgument);
  } else {
    FUZZ_CHECK(!parts->empty() && parts->size() <= 100);
    for (const auto& p : *parts) FUZZ_CHECK(p.number >= 1);
  }
  auto vers = ais::s3::ParseVersioningRequest(body);
  if (!vers.ok()) {
    FUZZ_CHECK(vers.status().code() == ais::Status::Code::kInvalidArgument);
  } else {
    FUZZ_CHECK(*vers == "Enabled" || *vers == "Suspended");
  }
  return 0;
}
