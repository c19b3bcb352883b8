// Access control of the AIS API: the permission bits each request needs (AIS checks them per
// handler; here they are one table, ../shared/spec/auth.md §7) and the check against the
// request's token.
//
// Two steps, so that nothing is served unchecked: the router checks every request by its method
// and path (RouteAccess) before any handler runs; a request whose bits depend on its action
// message is checked again, with the action's bits, by ReadActionMsg as soon as the message is
// decoded (ActionAccess). GetBatch checks each bucket it reads (handlers/batch.cc); a request
// that writes into another bucket than its URL names (a copy, move or archive to `bck_to` or
// `to_bck`, an object copy to `object_to`, an S3 copy's source) checks that bucket too, in its
// handler, before it acts (AuthorizeBucket, AuthorizeDestination).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "api/route.h"
#include "auth/access.h"
#include "auth/claims.h"
#include "http/exchange.h"
#include "util/status.h"

namespace ais {

struct ServerContext;

struct RouteAccess {
  bool open = false;          // no token needed (/v1/health, /v1/tokens: checked by their handler)
  auth::AccessAttrs bits = 0; // needed before the handler runs (0 with by_action: a valid token)
  bool on_bucket = false;     // bits apply to the route's bucket, else to the cluster
  bool by_action = false;     // the action message (or, for GetBatch, each bucket) adds its bits
};

RouteAccess RequiredAccess(const Route& route, const Exchange& ex);
// The bits of `action` (an ActionMsg's "action", "" when none) on this route; unknown actions
// need ADMIN (their handler then refuses them anyway).
auth::AccessAttrs ActionAccess(const Route& route, const Exchange& ex, std::string_view action,
                               const nlohmann::json& value);

// The claims of the request's bearer token: the Authorization header, else X-Amz-Security-Token
// (header, or, on the S3 API only, the parameter of a presigned URL). REQUIRES: ctx.auth.
Result<std::shared_ptr<const auth::Claims>> Authenticate(ServerContext& ctx, const Exchange& ex);
// The AIS token an S3 client carries as its session token: the X-Amz-Security-Token header, or
// on a presigned S3 URL (no Authorization header, not /v1) the query parameter; "" when none.
std::string AmzSecurityToken(const Exchange& ex);

// With tokens required: OK if the request's token grants `bits` on `bucket` (null: cluster
// level); kUnauthorized (no or bad token) or kForbidden. Without: OK.
Status Authorize(ServerContext& ctx, const Exchange& ex, auth::AccessAttrs bits, const auth::BucketRef* bucket);
// The same for the bucket named by the route (and the provider query).
Status AuthorizeRoute(ServerContext& ctx, const Exchange& ex, const Route& route, auth::AccessAttrs bits);
// The same for the bucket of store key `key` (store/bck.h).
Status AuthorizeBucket(ServerContext& ctx, const Exchange& ex, std::string_view key, auth::AccessAttrs bits);
// A bucket the request writes into besides (or instead of) its URL's: PUT on it, and
// CREATE-BUCKET as well when it does not exist yet (the request would create it). Its `access`
// property applies as to any bucket.
Status AuthorizeDestination(ServerContext& ctx, const Exchange& ex, std::string_view key);

}  // namespace ais
