#include "store/bucket_props.h"

#include <algorithm>

#include "store/bck.h"
#include "util/checksum.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace ais {
bool BucketProps::ShouldChunk(uint64_t size) const {
  if (size > effective_max_monolithic()) return true;
  return objsize_limit > 0 && size >= objsize_limit;
}

nlohmann::json BucketProps::ToAisJson(const std::string& key, const SpaceConfig& cluster) const {
  const bool remote = IsRemoteKey(key);
  nlohmann::json j = {
      {"provider", std::string(KeyProvider(key))},
      {"versioning",
       {{"enabled", versioning}, {"validate_warm_get", remote_validate_warm_get}, {"synchronize", remote_sync}}},
      {"checksum",
       {{"type", checksum_type},
        {"validate_cold_get", remote && validate_cold_get},
        {"validate_warm_get", validate_warm_get},
        {"validate_obj_move", false},
        {"enable_read_range", enable_read_range}}},
      {"chunks",
       {{"objsize_limit", FormatIecSize(objsize_limit)},
        {"max_monolithic_size", FormatIecSize(effective_max_monolithic())},
        {"chunk_size", FormatIecSize(effective_chunk_size())},
        {"checkpoint_every", checkpoint_every},
        {"flags", 0}}},
      {"mirror", {{"copies", mirror_copies}, {"burst_buffer", 128}, {"enabled", mirror_enabled}}},
      {"ec", {{"enabled", false}, {"data_slices", 1}, {"parity_slices", 1}, {"objsize_limit", 262144}}},
      {"lru", {{"dont_evict_time", cluster.LruJson()["dont_evict_time"]},
               {"capacity_upd_time", cluster.LruJson()["capacity_upd_time"]},
               {"enabled", lru_enabled_for(remote)}}},
      {"write_policy", {{"data", ""}, {"md", ""}}},
      {"access", std::to_string(access)},
      {"features", std::to_string(features)},
      {"bid", std::to_string(bid)},
      {"created", std::to_string(created_ns)},
  };
  if (remote) {
    nlohmann::json aws = nlohmann::json::object();
    if (!aws_region.empty()) aws["cloud_region"] = aws_region;
    if (!aws_endpoint.empty()) aws["endpoint"] = aws_endpoint;
    if (!aws_profile.empty()) aws["profile"] = aws_profile;
    if (aws_multipart_size > 0) aws["multipart_size"] = FormatIecSize(static_cast<uint64_t>(aws_multipart_size));
    if (aws_multipart_size < 0) aws["multipart_size"] = "-1";
    j["extra"] = {{"aws", aws}};
  }
  return j;
}

Status BucketProps::Apply(const nlohmann::json& patch) {
  BucketProps next = *this;
  // AIS BpropsToSet: the sections and keys this server keeps are typed; of the sections it has
  // no use for (write_policy, rate_limit) the types are checked.
  JsonFields f(patch, "value");
  bool ec_enabled = false;
  bool mirror_enabled = next.mirror_enabled;
  int64_t mirror_copies = next.mirror_copies;
  f.Object("mirror", [&](JsonFields& m) {
    m.Bool("enabled", &mirror_enabled).Int("copies", &mirror_copies, 0, 32);
    m.Unused(JsonFields::Kind::kInt, {"burst_buffer"});
  });
  f.Object("ec", [&](JsonFields& e) {
    e.Bool("enabled", &ec_enabled).Unused(JsonFields::Kind::kInt, {"data_slices", "parity_slices", "batch_size"});
    e.Unused(JsonFields::Kind::kAny, {"objsize_limit", "compression", "bundle_multiplier", "disk_only"});
  });
  f.Object("lru", [&](JsonFields& l) {
    std::optional<bool> enabled;
    l.OptBool("enabled", &enabled).Unused(JsonFields::Kind::kString, {"dont_evict_time", "capacity_upd_time"});
    l.Unused(JsonFields::Kind::kInt, {"batch_size"});
    if (enabled) next.lru_enabled = *enabled;
  });
  f.Object("checksum", [&](JsonFields& c) {
    c.Str("type", &next.checksum_type).Bool("validate_warm_get", &next.validate_warm_get);
    c.Bool("enable_read_range", &next.enable_read_range).Bool("validate_cold_get", &next.validate_cold_get);
    c.Unused(JsonFields::Kind::kBool, {"validate_obj_move"});
  });
  f.Object("versioning", [&](JsonFields& v) {
    v.Bool("enabled", &next.versioning).Bool("validate_warm_get", &next.remote_validate_warm_get);
    v.Bool("synchronize", &next.remote_sync);
  });
  f.Object("extra", [&](JsonFields& e) {
    e.Object("aws", [&](JsonFields& a) {
      a.Str("cloud_region", &next.aws_region).Str("endpoint", &next.aws_endpoint).Str("profile", &next.aws_profile);
      a.Unused(JsonFields::Kind::kAny, {"max_pagesize"});
      // An IEC size ("64MiB", a string in AIS's JSON, or a number); -1: always a single PUT.
      const nlohmann::json* mp = nullptr;
      a.Raw("multipart_size", &mp);
      if (mp) {
        std::optional<int64_t> v;
        if ((mp->is_string() && mp->get<std::string>() == "-1") || (mp->is_number_integer() && mp->get<int64_t>() == -1)) {
          v = -1;
        } else {
          std::optional<uint64_t> n;
          if (mp->is_string()) n = ParseIecSize(mp->get<std::string>());
          if (mp->is_number_unsigned()) n = mp->get<uint64_t>();
          if (n && (*n == 0 || (*n >= kMinMultipartSize && *n <= kMaxMultipartSize))) v = static_cast<int64_t>(*n);
        }
        if (!v) a.Fail("multipart_size", "expecting -1, 0 or a size in [5MiB, 5GiB], got " + mp->dump().substr(0, 64));
        else next.aws_multipart_size = *v;
      }
    });
    e.Object("gcp", [&](JsonFields& g) {
      // Per-bucket service-account keys are not served: the server's environment decides
      // (remote/gcs_auth.h). Empty is what AIS sends when none is set.
      std::string creds;
      g.Str("application_creds", &creds);
      if (!creds.empty()) {
        g.Fail("application_creds",
               "per-bucket GCP credentials are not supported (the server uses GOOGLE_APPLICATION_CREDENTIALS)");
      }
    });
    e.Unused(JsonFields::Kind::kObject, {"hdfs", "http", "azure", "oci"});
  });
  // Go `json:"features,string"` and `json:"access,string"`: AIS sends decimal strings, a client
  // may send numbers.
  for (auto [key, out] : {std::pair{"features", &next.features}, std::pair{"access", &next.access}}) {
    const nlohmann::json* given = nullptr;
    f.Raw(key, &given);
    if (!given) continue;
    std::optional<uint64_t> bits;
    if (given->is_string()) bits = ParseUint(given->get<std::string>());
    if (given->is_number_unsigned()) bits = given->get<uint64_t>();
    if (!bits) f.Fail(key, "expecting a non-negative integer (a decimal string), got " + given->dump().substr(0, 64));
    else *out = *bits;
  }
  f.Object("chunks", [&](JsonFields& c) {
    uint64_t every = next.checkpoint_every;
    c.Size("objsize_limit", &next.objsize_limit).Size("max_monolithic_size", &next.max_monolithic_size);
    c.Size("chunk_size", &next.chunk_size).Uint("checkpoint_every", &every, 1024).Unused(JsonFields::Kind::kInt, {"flags"});
    next.checkpoint_every = static_cast<uint32_t>(every);
  });
  f.Unused(JsonFields::Kind::kString, {"provider", "renamed"});
  // backend_bck: AIS's props carry it empty ({"name":"","provider":""}); a bucket named in it (an
  // ais:// bucket in front of a remote one) is not built here, and is refused, never dropped.
  f.Object("backend_bck", [](JsonFields& b) {
    std::string name, provider;
    b.Str("name", &name).Str("provider", &provider).Unused(JsonFields::Kind::kObject, {"namespace"});
    if (!name.empty() || !provider.empty()) {
      b.Fail("name", "an ais:// bucket backed by a remote bucket (backend_bck) is not supported by this server");
    }
  });
  f.Unused(JsonFields::Kind::kObject, {"write_policy", "rate_limit"});
  // Go ",string" numbers: AIS sends strings, a client may send numbers.
  f.Unused(JsonFields::Kind::kAny, {"bid", "created"});
  AIS_RETURN_IF_ERROR(f.Finish());
  if (mirror_enabled && (mirror_copies < 2 || mirror_copies > 32)) {  // AIS MirrorConf.ValidateAsProps
    return Status::InvalidArgument("invalid mirror.copies: " + std::to_string(mirror_copies) +
                                   " (expected value in range [2, 32])");
  }
  next.mirror_enabled = mirror_enabled;
  next.mirror_copies = static_cast<uint32_t>(std::max<int64_t>(mirror_copies, 1));
  if (mirror_enabled) next.mirror_used = true;
  if (ec_enabled) return Status::NotSupported("invalid \"value.ec.enabled\": erasure coding is not supported yet");
  if (!Checksummer::IsSupportedType(next.checksum_type)) {
    return Status::InvalidArgument("invalid \"value.checksum.type\": unsupported checksum type \"" +
                                   next.checksum_type.substr(0, 64) + "\"");
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
  nlohmann::json j = {{"checksum_type", checksum_type},       {"validate_warm_get", validate_warm_get},
          {"enable_read_range", enable_read_range}, {"versioning", versioning},
          {"objsize_limit", objsize_limit},        {"max_monolithic_size", max_monolithic_size},
          {"chunk_size", chunk_size},              {"checkpoint_every", checkpoint_every},
          {"created_ns", created_ns},              {"bid", bid},
          {"aws_profile", aws_profile},            {"aws_endpoint", aws_endpoint},
          {"aws_region", aws_region},              {"validate_cold_get", validate_cold_get},
          {"aws_multipart_size", aws_multipart_size},
          {"remote_validate_warm_get", remote_validate_warm_get},
          {"remote_sync", remote_sync},            {"features", features},
          {"access", access},                      {"mirror_enabled", mirror_enabled},
          {"mirror_copies", mirror_copies},        {"mirror_used", mirror_used}};
  if (lru_enabled) j["lru_enabled"] = *lru_enabled;
  return j;
}

Result<BucketProps> BucketProps::FromStored(const nlohmann::json& j) {
  // Our own file, yet a damaged one must be an error: json::value() throws on a wrong type and
  // casts an out-of-range float to an integer (UB), so every value is type-checked first.
  if (!j.is_object()) return Status::Corruption("stored bucket props are not a JSON object");
  for (const auto& [key, v] : j.items()) {
    bool ok = true;
    if (key == "checksum_type" || key == "aws_profile" || key == "aws_endpoint" || key == "aws_region") ok = v.is_string();
    else if (key == "validate_warm_get" || key == "enable_read_range" || key == "versioning" ||
             key == "validate_cold_get" || key == "remote_validate_warm_get" || key == "remote_sync" ||
             key == "lru_enabled" || key == "mirror_enabled" || key == "mirror_used") ok = v.is_boolean();
    else if (key == "created_ns" || key == "aws_multipart_size") ok = v.is_number_integer();
    else if (key == "objsize_limit" || key == "max_monolithic_size" || key == "chunk_size" ||
             key == "checkpoint_every" || key == "bid" || key == "features" || key == "access" ||
             key == "mirror_copies") {
      ok = v.is_number_unsigned();
    }
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
  p.aws_profile = j.value("aws_profile", std::string());
  p.aws_endpoint = j.value("aws_endpoint", std::string());
  p.aws_region = j.value("aws_region", std::string());
  p.aws_multipart_size = j.value("aws_multipart_size", int64_t{0});
  p.validate_cold_get = j.value("validate_cold_get", true);
  p.remote_validate_warm_get = j.value("remote_validate_warm_get", false);
  p.remote_sync = j.value("remote_sync", false);
  p.features = j.value("features", uint64_t{0});
  p.access = j.value("access", ~uint64_t{0});
  p.mirror_enabled = j.value("mirror_enabled", false);
  p.mirror_copies = std::max<uint32_t>(j.value("mirror_copies", uint32_t{1}), 1);
  p.mirror_used = j.value("mirror_used", false);
  if (p.mirror_enabled && (p.mirror_copies < 2 || p.mirror_copies > 32)) {
    return Status::Corruption("stored bucket props: mirror_copies " + std::to_string(p.mirror_copies));
  }
  if (j.contains("lru_enabled")) p.lru_enabled = j["lru_enabled"].get<bool>();
  return p;
}

}  // namespace ais
