#include "handlers/access.h"

#include <nlohmann/json.hpp>

#include "api/moss_request.h"  // NormalizeProvider
#include "api/routes.h"
#include "auth/authorizer.h"
#include "handlers/context.h"
#include "store/bck.h"
#include "util/clock.h"

namespace ais {

using namespace auth;  // the permission bits

namespace {

api::Method MethodOf(http::verb m) {
  switch (m) {
    case http::verb::head: return api::Method::kHead;
    case http::verb::put: return api::Method::kPut;
    case http::verb::post: return api::Method::kPost;
    case http::verb::delete_: return api::Method::kDelete;
    case http::verb::patch: return api::Method::kPatch;
    default: return api::Method::kGet;  // GET, and methods no row has (FindRoute then matches GET rows only)
  }
}

// The route table's row of this request, nullptr if none (or a method no row can have).
const api::RouteSpec* RowOf(const Route& route, const Exchange& ex) {
  const http::verb m = ex.method();
  if (m != http::verb::get && m != http::verb::head && m != http::verb::put && m != http::verb::post &&
      m != http::verb::delete_ && m != http::verb::patch) {
    return nullptr;
  }
  return api::FindRoute(MethodOf(m), route);
}

// Bucket props that set `extra.aws.endpoint` or `extra.aws.profile`.
bool NamesBackendSource(const nlohmann::json& props) {
  auto extra = props.find("extra");
  if (extra == props.end() || !extra->is_object()) return false;
  auto aws = extra->find("aws");
  return aws != extra->end() && aws->is_object() && (aws->contains("endpoint") || aws->contains("profile"));
}

}  // namespace

// The bits are the route table's (api/routes.cc); what it has no row for is served by no handler
// (they answer 400/404/405), and is checked as a cluster-level call: SHOW-CLUSTER to read,
// ADMIN for anything else, so that a gap in the table can never open a route.
RouteAccess RequiredAccess(const Route& route, const Exchange& ex) {
  if (const api::RouteSpec* row = RowOf(route, ex)) {
    if (row->open) return {.open = true};
    AccessAttrs bits = row->bits;
    // Present and non-empty, as the handler tells (an empty `append_type=` is a plain PUT).
    if (!row->bits_query.empty() && !ex.query(row->bits_query).value_or("").empty()) bits = row->bits_query_bits;
    return {.bits = bits, .on_bucket = row->on_bucket, .by_action = row->by_action};
  }
  if (route.area == "health" || route.area == "tokens") return {.open = true};  // their handlers refuse the rest
  const bool read = ex.method() == http::verb::get || ex.method() == http::verb::head;
  return {.bits = read ? kShowCluster : kAdmin};
}

AccessAttrs ActionAccess(const Route& route, const Exchange& ex, std::string_view action,
                         const nlohmann::json& value) {
  const api::RouteSpec* row = RowOf(route, ex);
  if (!row) return kAdmin;
  AccessAttrs bits = row->actions.empty() && !row->by_action && row->bits ? row->bits : api::ActionBits(*row, action);
  if (route.area == "buckets" && value.is_object() && (action == "set-bprops" || action == "create-bck")) {
    // Changing a bucket's `access` is an ACL change.
    if (action == "set-bprops" && value.contains("access")) bits |= kBckSetAcl;
    // Where a remote bucket's data comes from and as whom are cluster-level settings in AIS: a
    // bucket owner who could set them would point everyone's reads at an address of their choice.
    if (NamesBackendSource(value)) bits |= kAdmin;
  }
  return bits;
}

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

Status AuthorizeBucket(ServerContext& ctx, const Exchange& ex, std::string_view key, AccessAttrs bits) {
  auth::BucketRef bucket{.name = std::string(KeyName(key)), .provider = std::string(ais::KeyProvider(key))};
  return Authorize(ctx, ex, bits, &bucket);
}

Status AuthorizeDestination(ServerContext& ctx, const Exchange& ex, std::string_view key) {
  const bool exists = ctx.store.GetBucket(std::string(key)).ok();
  return AuthorizeBucket(ctx, ex, key, exists ? kPut : kPut | kCreateBucket);
}

}  // namespace ais
