// Claims: what a verified token says about its bearer (AIS tok.AISClaims), and the permission
// check of one request against them (AIS CheckPermissions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "auth/access.h"
#include "util/status.h"

namespace ais::auth {

struct ClusterGrant {
  std::string id;  // a cluster UUID; "" = any cluster that trusts the issuer
  AccessAttrs perm = 0;
};

struct BucketGrant {
  std::string name{};
  std::string provider{};
  std::string ns_uuid{};  // must be this cluster's UUID to apply
  std::string ns_name{};  // must be "" (the global namespace) to apply here
  AccessAttrs perm = 0;
};

struct Claims {
  std::string sub;
  std::string iss;
  std::vector<std::string> aud;
  int64_t exp = 0;  // seconds since the epoch
  bool has_nbf = false;
  int64_t nbf = 0;
  bool admin = false;
  std::vector<ClusterGrant> clusters;
  std::vector<BucketGrant> buckets;

  // Strict about types, as AIS's decoder is: `admin` a bool, `exp` a number, `perm` a decimal
  // string. kUnauthorized naming what is wrong.
  static Result<Claims> Decode(const nlohmann::json& payload);
};

// The bucket a request concerns, as a grant names it.
struct BucketRef {
  std::string name;
  std::string provider = "ais";
  std::string ns_uuid{};  // "": this cluster's; else a remote cluster's bucket (its alias or UUID)
  std::string ns_name{};  // its namespace ("": the global one)
};

// OK if the claims grant every bit of `want` on `bucket` (null: a cluster-level request) in the
// cluster `cluster_uuid`; kForbidden naming the user and the missing permissions otherwise.
// Bits of a system bucket (".sys-*") also need ADMIN.
Status CheckPermissions(const Claims& claims, const std::string& cluster_uuid, const BucketRef* bucket,
                        AccessAttrs want);

}  // namespace ais::auth
