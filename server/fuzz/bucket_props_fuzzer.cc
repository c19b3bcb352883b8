// The input is JSON decoded two ways: as a props patch from a request (BpropsToSet: create
// bucket, set props) by BucketProps::Apply, and as the stored form read back from the BMD file
// at startup by BucketProps::FromStored (store/bucket_props.h), which must refuse damage with
// kCorruption instead of throwing.
//
// Properties: accepted props are in their documented ranges; ToStored/FromStored round-trips
// them exactly; the AIS document HEAD returns (ToAisJson), sent back as a patch, is accepted and
// gives the same effective settings.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <nlohmann/json.hpp>

#include "fuzz_check.h"
#include "store/bucket_props.h"
#include "util/checksum.h"
#include "util/json_fields.h"

namespace {

bool SameStored(const ais::BucketProps& a, const ais::BucketProps& b) { return a.ToStored() == b.ToStored(); }

bool SameEffective(const ais::BucketProps& a, const ais::BucketProps& b) {
  return a.checksum_type == b.checksum_type && a.validate_warm_get == b.validate_warm_get &&
         a.enable_read_range == b.enable_read_range && a.versioning == b.versioning &&
         a.objsize_limit == b.objsize_limit && a.effective_chunk_size() == b.effective_chunk_size() &&
         a.effective_max_monolithic() == b.effective_max_monolithic() && a.checkpoint_every == b.checkpoint_every;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = ais::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  const nlohmann::json& j = *parsed;

  ais::BucketProps p;
  ais::BucketProps before = p;
  if (ais::Status st = p.Apply(j); !st.ok()) {
    FUZZ_CHECK(SameStored(p, before));  // a refused patch changes nothing
  } else {
    FUZZ_CHECK(ais::Checksummer::IsSupportedType(p.checksum_type));
    FUZZ_CHECK(p.chunk_size == 0 || (p.chunk_size >= ais::kMinChunkSize && p.chunk_size <= ais::kMaxChunkSize));
    FUZZ_CHECK(p.objsize_limit <= p.effective_max_monolithic());
    FUZZ_CHECK(p.checkpoint_every <= 1024);
    auto stored = ais::BucketProps::FromStored(nlohmann::json::parse(p.ToStored().dump()));
    FUZZ_CHECK(stored.ok() && SameStored(*stored, p));
    ais::BucketProps q;
    FUZZ_CHECK(q.Apply(p.ToAisJson("b", ais::SpaceConfig{})).ok());
    FUZZ_CHECK(SameEffective(q, p));
  }

  if (auto stored = ais::BucketProps::FromStored(j); stored.ok()) {
    auto again = ais::BucketProps::FromStored(stored->ToStored());
    FUZZ_CHECK(again.ok() && SameStored(*again, *stored));
  } else {
    FUZZ_CHECK(stored.status().code() == ais::Status::Code::kCorruption);
  }
  return 0;
}
