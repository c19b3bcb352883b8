#include "store/bucket_props.h"

#include "util/checksum.h"
#include "util/strings.h"

namespace ais {
namespace {

// Accepts an IEC string ("64MiB") or a number, as the AIS CLI and SDKs send both.
Status ReadSize(const nlohmann::json& v, const char* what, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return Status::OK();
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return Status::OK();
  }
  if (v.is_string()) {
    if (auto n = ParseIecSize(v.get<std::string>())) {
      *out = *n;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(std::string("invalid ") + what + ": " + v.dump());
}

Status ReadBool(const nlohmann::json& v, const char* what, bool* out) {
  if (!v.is_boolean()) return Status::InvalidArgument(std::string("invalid ") + what + ": " + v.dump());
  *out = v.get<bool>();
  return Status::OK();
}

}  // namespace

bool BucketProps::ShouldChunk(uint64_t size) const {
  if (size > effective_max_monolithic()) return true;
  return objsize_limit > 0 && size >= objsize_limit;
}

nlohmann::json BucketProps::ToAisJson(const std::string& bucket) const {
  (void)bucket;
  return {
      {"provider", "ais"},
      {"versioning", {{"enabled", versioning}, {"validate_warm_get", false}, {"synchronize", false}}},
      {"checksum",
       {{"type", checksum_type},
        {"validate_cold_get", false},
        {"validate_warm_get", validate_warm_get},
        {"validate_obj_move", false},
        {"enable_read_range", enable_read_range}}},
      {"chunks",
       {{"objsize_limit", FormatIecSize(objsize_limit)},
        {"max_monolithic_size", FormatIecSize(effective_max_monolithic())},
        {"chunk_size", FormatIecSize(effective_chunk_size())},
        {"checkpoint_every", checkpoint_every},
        {"flags", 0}}},
      {"mirror", {{"copies", 1}, {"burst_buffer", 128}, {"enabled", false}}},
      {"ec", {{"enabled", false}, {"data_slices", 1}, {"parity_slices", 1}, {"objsize_limit", 262144}}},
      {"lru", {{"dont_evict_time", "2h"}, {"capacity_upd_time", "10m"}, {"enabled", false}}},
      {"write_policy", {{"data", ""}, {"md", ""}}},
      {"access", "18446744073709551615"},
      {"features", "0"},
      {"bid", std::to_string(bid)},
      {"created", std::to_string(created_ns)},
  };
}

Status BucketProps::Apply(const nlohmann::json& patch) {
  if (patch.is_null()) return Status::OK();
  if (!patch.is_object()) return Status::InvalidArgument("bucket properties must be a JSON object");
  BucketProps next = *this;
  for (auto& [section, val] : patch.items()) {
    if (section == "checksum" && val.is_object()) {
      for (auto& [k, v] : val.items()) {
        if (k == "type") {
          if (!v.is_string() || !Checksummer::IsSupportedType(v.get<std::string>())) {
            return Status::InvalidArgument("invalid checksum type: " + v.dump());
          }
          next.checksum_type = v.get<std::string>();
        } else if (k == "validate_warm_get") {
          AIS_RETURN_IF_ERROR(ReadBool(v, "checksum.validate_warm_get", &next.validate_warm_get));
        } else if (k == "enable_read_range") {
          AIS_RETURN_IF_ERROR(ReadBool(v, "checksum.enable_read_range", &next.enable_read_range));
        }
      }
    } else if (section == "versioning" && val.is_object()) {
      if (val.contains("enabled")) AIS_RETURN_IF_ERROR(ReadBool(val["enabled"], "versioning.enabled", &next.versioning));
    } else if (section == "chunks" && val.is_object()) {
      for (auto& [k, v] : val.items()) {
        if (k == "objsize_limit") {
          AIS_RETURN_IF_ERROR(ReadSize(v, "chunks.objsize_limit", &next.objsize_limit));
        } else if (k == "max_monolithic_size") {
          AIS_RETURN_IF_ERROR(ReadSize(v, "chunks.max_monolithic_size", &next.max_monolithic_size));
        } else if (k == "chunk_size") {
          AIS_RETURN_IF_ERROR(ReadSize(v, "chunks.chunk_size", &next.chunk_size));
        } else if (k == "checkpoint_every") {
          uint64_t n = 0;
          AIS_RETURN_IF_ERROR(ReadSize(v, "chunks.checkpoint_every", &n));
          if (n > 1024) return Status::InvalidArgument("chunks.checkpoint_every must be in [0, 1024]");
          next.checkpoint_every = static_cast<uint32_t>(n);
        }
      }
    }
  }
  if (next.chunk_size != 0 && (next.chunk_size < kMinChunkSize || next.chunk_size > kMaxChunkSize)) {
    return Status::InvalidArgument("chunks.chunk_size must be in [1KiB, 5GiB]");
  }
  if (next.max_monolithic_size != 0 &&
      (next.max_monolithic_size < (1ULL << 30) || next.max_monolithic_size > kDefaultMaxMonolithic)) {
    return Status::InvalidArgument("chunks.max_monolithic_size must be in [1GiB, 1TiB]");
  }
  if (next.objsize_limit > next.effective_max_monolithic()) {
    return Status::InvalidArgument("chunks.objsize_limit must not exceed chunks.max_monolithic_size");
  }
  *this = next;
  return Status::OK();
}

nlohmann::json BucketProps::ToStored() const {
  return {{"checksum_type", checksum_type},       {"validate_warm_get", validate_warm_get},
          {"enable_read_range", enable_read_range}, {"versioning", versioning},
          {"objsize_limit", objsize_limit},        {"max_monolithic_size", max_monolithic_size},
          {"chunk_size", chunk_size},              {"checkpoint_every", checkpoint_every},
          {"created_ns", created_ns},              {"bid", bid}};
}

Result<BucketProps> BucketProps::FromStored(const nlohmann::json& j) {
  // Our own file, yet a damaged one must be an error: json::value() throws on a wrong type and
  // casts an out-of-range float to an integer (UB), so every value is type-checked first.
  if (!j.is_object()) return Status::Corruption("stored bucket props are not a JSON object");
  for (const auto& [key, v] : j.items()) {
    bool ok = true;
    if (key == "checksum_type") ok = v.is_string();
    else if (key == "validate_warm_get" || key == "enable_read_range" || key == "versioning") ok = v.is_boolean();
    else if (key == "created_ns") ok = v.is_number_integer();
    else if (key == "objsize_limit" || key == "max_monolithic_size" || key == "chunk_size" ||
             key == "checkpoint_every" || key == "bid") ok = v.is_number_unsigned();
    if (!ok) return Status::Corruption("stored bucket props: invalid \"" + key + "\": " + v.dump().substr(0, 64));
  }
  BucketProps p;
  p.checksum_type = j.value("checksum_type", p.checksum_type);
  p.validate_warm_get = j.value("validate_warm_get", false);
  p.enable_read_range = j.value("enable_read_range", false);
  p.versioning = j.value("versioning", true);
  p.objsize_limit = j.value("objsize_limit", uint64_t{0});
  p.max_monolithic_size = j.value("max_monolithic_size", uint64_t{0});
  p.chunk_size = j.value("chunk_size", uint64_t{0});
  p.checkpoint_every = j.value("checkpoint_every", uint32_t{0});
  p.created_ns = j.value("created_ns", int64_t{0});
  p.bid = j.value("bid", uint64_t{0});
  return p;
}

}  // namespace ais
