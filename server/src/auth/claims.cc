#include "auth/claims.h"

#include <nlohmann/json.hpp>

#include "util/strings.h"

namespace ais::auth {

namespace {

// A claim's value of the wrong type is an invalid token, as Go's decoder fails on it.
Status BadClaim(const std::string& what) { return Status::Unauthorized("invalid token [err: " + what + "]"); }

Result<AccessAttrs> DecodePerm(const nlohmann::json& j, const std::string& where) {
  if (!j.is_string()) return BadClaim(where + ": \"perm\" must be a decimal string");
  auto n = ParseUint(j.get<std::string>());
  if (!n) return BadClaim(where + ": invalid \"perm\" \"" + j.get<std::string>().substr(0, 32) + "\"");
  return static_cast<AccessAttrs>(*n);
}

// A string member that may be absent (then ""); any other type is an error.
Status OptString(const nlohmann::json& obj, const char* key, std::string* out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::OK();
  if (!it->is_string()) return BadClaim(where + ": \"" + key + "\" must be a string");
  *out = it->get<std::string>();
  return Status::OK();
}

Status DecodeClusters(const nlohmann::json& j, std::vector<ClusterGrant>* out) {
  if (j.is_null()) return Status::OK();
  if (!j.is_array()) return BadClaim("\"clusters\" must be an array");
  for (const auto& e : j) {
    if (!e.is_object()) return BadClaim("\"clusters\" entries must be objects");
    ClusterGrant g;
    AIS_RETURN_IF_ERROR(OptString(e, "id", &g.id, "clusters"));
    auto perm = DecodePerm(e.contains("perm") ? e["perm"] : nlohmann::json("0"), "clusters");
    if (!perm.ok()) return perm.status();
    g.perm = *perm;
    out->push_back(std::move(g));
  }
  return Status::OK();
}

Status DecodeBuckets(const nlohmann::json& j, std::vector<BucketGrant>* out) {
  if (j.is_null()) return Status::OK();
  if (!j.is_array()) return BadClaim("\"buckets\" must be an array");
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("bck") || !e["bck"].is_object()) {
      return BadClaim("\"buckets\" entries must be {\"bck\": {...}, \"perm\": \"...\"}");
    }
    const auto& b = e["bck"];
    BucketGrant g;
    AIS_RETURN_IF_ERROR(OptString(b, "name", &g.name, "buckets"));
    AIS_RETURN_IF_ERROR(OptString(b, "provider", &g.provider, "buckets"));
    if (auto ns = b.find("namespace"); ns != b.end() && !ns->is_null()) {
      if (!ns->is_object()) return BadClaim("buckets: \"namespace\" must be an object");
      AIS_RETURN_IF_ERROR(OptString(*ns, "uuid", &g.ns_uuid, "buckets"));
      AIS_RETURN_IF_ERROR(OptString(*ns, "name", &g.ns_name, "buckets"));
    }
    auto perm = DecodePerm(e.contains("perm") ? e["perm"] : nlohmann::json("0"), "buckets");
    if (!perm.ok()) return perm.status();
    g.perm = *perm;
    out->push_back(std::move(g));
  }
  return Status::OK();
}

// A NumericDate: a JSON number of seconds (a fraction is allowed, and truncated).
Status NumericDate(const nlohmann::json& payload, const char* key, bool* present, int64_t* out) {
  auto it = payload.find(key);
  *present = it != payload.end() && !it->is_null();
  if (!*present) return Status::OK();
  if (!it->is_number()) return BadClaim(std::string("\"") + key + "\" must be a number (seconds since the epoch)");
  const double v = it->get<double>();
  if (!(v > -9.2e18 && v < 9.2e18)) return BadClaim(std::string("\"") + key + "\" out of range");
  *out = static_cast<int64_t>(v);
  return Status::OK();
}

std::string ProviderOf(const std::string& p) { return p.empty() ? "ais" : p; }

}  // namespace

std::string AccessNames(AccessAttrs bits) {
  static constexpr const char* kNames[] = {"GET",          "HEAD-OBJECT",    "PUT",           "APPEND",
                                           "DELETE-OBJECT", "MOVE-OBJECT",   "PROMOTE",       "UPDATE-OBJECT",
                                           "HEAD-BUCKET",  "LIST-OBJECTS",   "PATCH",         "SET-BUCKET-ACL",
                                           "LIST-BUCKETS", "SHOW-CLUSTER",   "CREATE-BUCKET", "DESTROY-BUCKET",
                                           "MOVE-BUCKET",  "ADMIN"};
  if (bits == kAccessAll) return "su";
  if (bits == 0) return "none";
  std::string out;
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (bits & (1ULL << i)) out += (out.empty() ? "" : ",") + std::string(kNames[i]);
  }
  return out;
}

Result<Claims> Claims::Decode(const nlohmann::json& payload) {
  if (!payload.is_object()) return BadClaim("the payload is not a JSON object");
  Claims c;
  AIS_RETURN_IF_ERROR(OptString(payload, "sub", &c.sub, "claims"));
  if (c.sub.empty()) return BadClaim("missing 'sub' claim");
  AIS_RETURN_IF_ERROR(OptString(payload, "iss", &c.iss, "claims"));
  if (auto aud = payload.find("aud"); aud != payload.end() && !aud->is_null()) {
    if (aud->is_string()) {
      c.aud.push_back(aud->get<std::string>());
    } else if (aud->is_array()) {
      for (const auto& a : *aud) {
        if (!a.is_string()) return BadClaim("\"aud\" must be a string or an array of strings");
        c.aud.push_back(a.get<std::string>());
      }
    } else {
      return BadClaim("\"aud\" must be a string or an array of strings");
    }
  }
  bool has_exp = false;
  AIS_RETURN_IF_ERROR(NumericDate(payload, "exp", &has_exp, &c.exp));
  if (!has_exp) return BadClaim("token is missing required claim: exp claim is required");
  AIS_RETURN_IF_ERROR(NumericDate(payload, "nbf", &c.has_nbf, &c.nbf));
  if (auto admin = payload.find("admin"); admin != payload.end() && !admin->is_null()) {
    if (!admin->is_boolean()) return BadClaim("\"admin\" must be a bool");
    c.admin = admin->get<bool>();
  }
  AIS_RETURN_IF_ERROR(DecodeClusters(payload.value("clusters", nlohmann::json()), &c.clusters));
  AIS_RETURN_IF_ERROR(DecodeBuckets(payload.value("buckets", nlohmann::json()), &c.buckets));
  return c;
}

Status CheckPermissions(const Claims& claims, const std::string& cluster_uuid, const BucketRef* bucket,
                        AccessAttrs want) {
  if (claims.admin) return Status::OK();
  if (bucket && bucket->name.starts_with(".sys-")) want |= kAdmin;
  if (want == 0) return Status::Forbidden("user `" + claims.sub + "`: empty permission request");
  const ClusterGrant* cluster = nullptr;
  for (const auto& g : claims.clusters) {
    if (g.id == cluster_uuid) {
      cluster = &g;
      break;
    }
    if (g.id.empty() && !cluster) cluster = &g;
  }
  auto deny = [&](AccessAttrs missing) {
    std::string on = bucket ? " on bucket \"" + ProviderOf(bucket->provider) + "://" + bucket->name + "\"" : "";
    return Status::Forbidden("user `" + claims.sub + "` has insufficient permissions" + on + " (missing " +
                             AccessNames(missing) + ")");
  };
  const AccessAttrs cluster_want = want & kClusterBits;
  const AccessAttrs bucket_want = want & kBucketBits;
  const AccessAttrs cluster_perm = cluster ? cluster->perm : 0;
  if ((cluster_perm & cluster_want) != cluster_want) return deny(cluster_want & ~cluster_perm);
  if (bucket_want == 0) return Status::OK();
  AccessAttrs perm = cluster_perm;
  if (bucket) {
    for (const auto& g : claims.buckets) {
      const std::string& ns_uuid = bucket->ns_uuid.empty() ? cluster_uuid : bucket->ns_uuid;
      if (g.name == bucket->name && ProviderOf(g.provider) == ProviderOf(bucket->provider) && g.ns_uuid == ns_uuid &&
          g.ns_name == bucket->ns_name) {
        perm = g.perm;  // a bucket grant alone decides, and may narrow the cluster's
        break;
      }
    }
  }
  if ((perm & bucket_want) != bucket_want) return deny(bucket_want & ~perm);
  return Status::OK();
}

}  // namespace ais::auth
