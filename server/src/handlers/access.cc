#include "handlers/access.h"

#include <nlohmann/json.hpp>

#include "api/moss_request.h"  // NormalizeProvider
#include "auth/authorizer.h"
#include "handlers/context.h"
#include "store/bck.h"
#include "util/clock.h"

namespace ais {

using namespace auth;  // the permission bits

RouteAccess RequiredAccess(const Route& route, const Exchange& ex) {
  const http::verb m = ex.method();
  const bool read = m == http::verb::get || m == http::verb::head;
  const std::string& area = route.area;
  if (area == "health" || area == "tokens") return {.open = true};
  if (area == "objects") {
    if (route.object.empty()) return {.on_bucket = true, .by_action = true};  // POST promote, blob-download
    switch (m) {
      case http::verb::get: return {.bits = kGet, .on_bucket = true};
      case http::verb::head: return {.bits = kObjHead, .on_bucket = true};
      case http::verb::put:
        return {.bits = ex.query("append_type") ? kAppend : kPut, .on_bucket = true};
      case http::verb::delete_: return {.bits = kObjDelete, .on_bucket = true};
      default: return {.on_bucket = true, .by_action = true};  // POST, PATCH
    }
  }
  if (area == "buckets") {
    if (m == http::verb::head) return {.bits = kBckHead, .on_bucket = true};
    return {.on_bucket = !route.bucket.empty(), .by_action = true};
  }
  if (area == "ml") return {.by_action = true};
  // daemon, cluster, reverse, download, sort: cluster-level.
  return {.bits = read ? kShowCluster : kAdmin};
}

AccessAttrs ActionAccess(const Route& route, const Exchange& ex, std::string_view action,
                         const nlohmann::json& value) {
  const http::verb m = ex.method();
  if (route.area == "objects") {
    if (m == http::verb::patch) return kObjUpdate;
    if (action == "rename-obj") return kObjMove;
    if (action == "promote") return kPromote;
    if (action == "check-lock") return kObjHead;
    if (action == "blob-download" || action.starts_with("mpt-")) return kAccessRW;
    return kAdmin;
  }
  if (route.area == "buckets") {
    switch (m) {
      case http::verb::get:
        if (route.bucket.empty()) return action == "summary-bck" ? kBckHead : kListBuckets;
        return action == "summary-bck" || action == "show-inventory" ? kBckHead : kObjList;
      case http::verb::post:
        if (action == "create-bck") return kCreateBucket;
        if (action == "move-bck") return kMoveBucket;
        if (action == "create-inventory") return kAdmin;
        if (action == "copy-bck" || action == "copy-listrange" || action == "prefetch-listrange" ||
            action == "rechunk") {
          return kAccessRW;
        }
        return kAdmin;
      case http::verb::delete_:
        if (action.empty() || action == "destroy-bck") return kDestroyBucket;
        if (action == "destroy-inventory") return kDestroyBucket | kAdmin;
        if (action == "delete-listrange" || action == "evict-listrange" || action == "evict-remote-bck") {
          return kObjDelete;
        }
        return kAdmin;
      case http::verb::patch:
        if (action == "set-bprops" && value.is_object() && value.contains("access")) return kPatch | kBckSetAcl;
        return kPatch;
      case http::verb::put: return action == "archive" ? kAccessRW : kAdmin;
      default: return kAdmin;
    }
  }
  const AccessAttrs bits = RequiredAccess(route, ex).bits;  // cluster and daemon: ADMIN but for GET
  return bits ? bits : kAdmin;
}

Result<std::shared_ptr<const auth::Claims>> Authenticate(ServerContext& ctx, const Exchange& ex) {
  std::string amz(ex.header("X-Amz-Security-Token"));
  if (amz.empty() && ex.header("Authorization").empty()) {  // a presigned URL (SigV4, SigV2 spelling)
    amz = ex.query("X-Amz-Security-Token").value_or(ex.query("x-amz-security-token").value_or(""));
  }
  return ctx.auth->Authenticate(ex.header("Authorization"), amz, NowNs() / 1000000000);
}

namespace {

// The bucket's own `access` property (AIS: checked after the token, and alone when tokens are
// not required). Exempt: with tokens, an admin's PATCH and ACL changes (so an admin can always
// repair a bucket's access); without, every read-only op, PATCH and ACL changes.
Status CheckBucketAccess(ServerContext& ctx, const auth::BucketRef& bucket, AccessAttrs bits, bool tokens, bool admin) {
  auto access = ctx.store.buckets().Access(BucketKey(bucket.provider, bucket.name));
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
  return Authorize(ctx, ex, bits, &bucket);
}

}  // namespace ais
