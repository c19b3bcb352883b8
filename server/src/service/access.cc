#include "service/access.h"

#include "api/moss_request.h"  // NormalizeProvider
#include "auth/authorizer.h"
#include "remote/cache_tier.h"
#include "service/context.h"
#include "store/bck.h"
#include "util/clock.h"

namespace ais {

using namespace auth::bits;  // the permission bits
using auth::AccessAttrs;
using auth::AccessNames;

std::string AmzSecurityToken(const Exchange& ex) {
  std::string amz(ex.header("X-Amz-Security-Token"));
  // A token in a URL ends up in logs and histories: taken from presigned S3 URLs only, which
  // have no other place for it, never on the AIS API (/v1).
  const bool ais_api = ex.raw_path().starts_with("/v1/") || ex.raw_path() == "/v1";
  if (amz.empty() && !ais_api && ex.header("Authorization").empty()) {  // a presigned URL (SigV4, SigV2 spelling)
    amz = ex.query("X-Amz-Security-Token").value_or(ex.query("x-amz-security-token").value_or(""));
  }
  return amz;
}

Result<std::shared_ptr<const auth::Claims>> Authenticate(ServerContext& ctx, const Exchange& ex) {
  return ctx.auth->Authenticate(ex.header("Authorization"), AmzSecurityToken(ex), NowNs() / 1000000000);
}

namespace {

// The bucket's own `access` property (AIS: checked after the token, and alone when tokens are
// not required). Exempt: with tokens, an admin's PATCH and ACL changes (so an admin can always
// repair a bucket's access); without, every read-only op, PATCH and ACL changes.
Status CheckBucketAccess(ServerContext& ctx, const auth::BucketRef& bucket, AccessAttrs bits, bool tokens, bool admin) {
  // (A remote cluster's bucket by the UUID its alias is known by; not yet known: not in the BMD.)
  std::string uuid = bucket.ns_uuid;
  if (!uuid.empty()) uuid = ctx.remote.ais_clusters().KnownUuid(uuid).value_or(uuid);
  auto access = ctx.store.buckets().Access(BucketKey(bucket.provider, BucketNs{uuid, bucket.ns_name}, bucket.name));
  if (!access) return Status::OK();  // no such bucket: its handler says so
  const AccessAttrs exempt = tokens ? (admin ? kPatch | kBckSetAcl : 0) : kAccessRO | kPatch | kBckSetAcl;
  const AccessAttrs missing = bits & kBucketBits & ~*access & ~exempt;
  if (missing == 0) return Status::OK();
  return Status::Forbidden("bucket \"" + std::string(ProviderScheme(bucket.provider)) + bucket.name +
                           "\": access denied (its access property does not allow " + AccessNames(missing) + ")");
}

}  // namespace

Status Authorize(ServerContext& ctx, const Exchange& ex, AccessAttrs bits, const auth::BucketRef* bucket) {
  const bool tokens = ctx.auth && ctx.auth->required();
  bool admin = false;
  if (tokens) {
    auto claims = Authenticate(ctx, ex);
    if (!claims.ok()) return claims.status();
    AIS_RETURN_IF_ERROR(CheckPermissions(**claims, ctx.cluster_uuid, bucket, bits));
    admin = (*claims)->admin;
  }
  return bucket ? CheckBucketAccess(ctx, *bucket, bits, tokens, admin) : Status::OK();
}

Status AuthorizeRoute(ServerContext& ctx, const Exchange& ex, const Route& route, AccessAttrs bits) {
  if (route.bucket.empty() || (route.area != "objects" && route.area != "buckets")) {
    return Authorize(ctx, ex, bits, nullptr);
  }
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  auth::BucketRef bucket{.name = route.bucket, .provider = provider.ok() ? *provider : "ais"};
  if (auto ns = NamespaceOf(ex); ns.ok()) {  // (a malformed one: its handler refuses it)
    bucket.ns_uuid = ns->uuid;
    bucket.ns_name = ns->name;
  }
  return Authorize(ctx, ex, bits, &bucket);
}

Status AuthorizeBucket(ServerContext& ctx, const Exchange& ex, std::string_view key, AccessAttrs bits) {
  const BucketNs ns = KeyNs(key);
  auth::BucketRef bucket{.name = std::string(KeyName(key)), .provider = std::string(ais::KeyProvider(key)),
                         .ns_uuid = ns.uuid, .ns_name = ns.name};
  return Authorize(ctx, ex, bits, &bucket);
}

Status AuthorizeDestination(ServerContext& ctx, const Exchange& ex, std::string_view key) {
  const bool exists = ctx.store.GetBucket(std::string(key)).ok();
  return AuthorizeBucket(ctx, ex, key, exists ? kPut : kPut | kCreateBucket);
}

}  // namespace ais
