// Access control: the check of a request's token (and of a bucket's own `access` property)
// against the permission bits it needs (../shared/spec/auth.md §7).
//
// The bits come from the route table (router/routes.cc): the router checks every request with
// its row's bits before any handler runs, and, where the bits depend on the action message, with
// the action's bits as soon as the message is decoded. GetBatch checks each bucket it reads
// (handlers/batch.cc); a request that writes into another bucket than its URL names (a copy,
// move or archive to `bck_to` or `to_bck`, an object copy to `object_to`, an S3 copy's source)
// checks that bucket too, in its handler, before it acts (AuthorizeBucket, AuthorizeDestination).
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
