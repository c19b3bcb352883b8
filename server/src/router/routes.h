// The route table: every REST endpoint this server serves, as data, and the one description of
// the REST surface. One row per (method, path template): its handler (or, for endpoints that take
// an AIS action message or a `what=` query, the handler of each action or value), which buckets
// it serves (local, remote), the permission bits it needs, its metrics label, its query
// parameters and headers, its request body and its reply.
//
// Its readers, so that none can drift from another:
//   - the router (router/router.h): finds the row, checks access with its bits, reads the action
//     message, resolves the bucket and calls the row's handler: a route added here is served;
//   - the metrics: each request is counted under its row's `op`;
//   - the OpenAPI document (router/openapi.h): `GET /openapi.yaml`, `aistore-server --print-openapi`
//     and docs/openapi.yaml are printed from these rows.
//
// No I/O; the rows are built once and never change (safe to read from any thread).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/route.h"
#include "auth/access.h"
#include "metrics/metrics.h"
#include "s3/s3.h"
#include "service/call.h"

namespace ais::router {

enum class Method { kGet, kHead, kPut, kPost, kDelete, kPatch };
std::string_view MethodName(Method m);  // "GET", ...

// A query parameter or header. `type` is a JSON-schema type: "string", "integer", "boolean".
struct Param {
  std::string_view name;
  std::string_view type;
  std::string_view description;
  bool required = false;
};

// Who serves a request, by the bucket it names: `local` for an ais:// bucket (and for rows that
// name none), `remote` for a remote one. A null one refuses the request with an error that says
// which buckets the operation is for.
struct Serve {
  Handler local = nullptr;
  Handler remote = nullptr;
};
constexpr Serve Both(Handler h) { return {h, h}; }
constexpr Serve LocalOnly(Handler h) { return {h, nullptr}; }
constexpr Serve RemoteOnly(Handler h) { return {nullptr, h}; }
constexpr Serve LocalAndRemote(Handler local, Handler remote) { return {local, remote}; }

// One "action" of an AIS action message ({"action": ..., "name": ..., "value": ...}).
struct Action {
  std::string_view name;  // "" = a request with no action (e.g. DELETE a bucket: destroy it)
  auth::AccessAttrs bits;
  std::string_view summary;
  Serve serve = {};
  // Resolve the path's bucket before the handler runs (ResolveBucket: a remote bucket is added
  // on first use). False: the handler gets the bucket's store key unresolved (create-bck: a
  // bucket added on the fly would exist already).
  bool resolve = true;
  // Bits the action's value adds (set-bprops with `access`: BCK-SET-ACL); null: none.
  auth::AccessAttrs (*value_bits)(const nlohmann::json& value) = nullptr;
};

// One value of a `what=` query (GET /v1/cluster?what=smap).
struct WhatValue {
  std::string_view name;
  std::string_view summary;
  Handler handler;
};

struct RouteSpec {
  Method method;
  std::string_view path;  // OpenAPI template: "/v1/objects/{bucket}/{object}"; "{object}" takes the rest
  // What the router dispatches on: Route::area for /v1 paths; "s3" for the S3 front end; "" for
  // the paths outside /v1 (/metrics, /openapi.yaml).
  std::string_view area;
  std::string_view summary;
  std::string_view description = {};

  // Dispatch: the row's handler, else its actions' (the action message), else its `what` values'.
  Serve serve = {};
  std::vector<WhatValue> what = {};
  std::string_view unknown_what = {};  // the error for a `what` not listed ("{}": the value), as AIS words it
  bool by_node = false;   // the Ais-Node-Id header picks the node face (/v1/reverse)
  Op op = Op::kOther;  // what the metrics count a request as

  // Access (service/access.h). `open`: no token needed. Otherwise `bits` before the handler
  // runs (0 with by_action: a valid token now, the action's bits once the message is read).
  bool open = false;
  auth::AccessAttrs bits = 0;
  bool on_bucket = false;  // the bits are checked against the path's bucket, else the cluster
  bool by_action = false;
  std::vector<Action> actions = {};  // the action message's "action" values
  auth::AccessAttrs unknown_action_bits = auth::kAdmin;  // an action not listed (its handler refuses it)
  // A query parameter that changes the bits and the metrics label when present (PUT an object
  // with ?append_type: APPEND).
  std::string_view bits_query = {};
  auth::AccessAttrs bits_query_bits = 0;
  Op bits_query_op = Op::kOther;

  std::vector<Param> query = {};
  std::vector<Param> headers = {};
  // The S3 front end's rows: the operations of this method and path, first match wins; a request
  // none matches is refused with `s3_unmatched` (400), or 405 when that is empty.
  std::vector<s3::Operation> s3_operations = {};
  std::string_view s3_unmatched = {};

  // Bodies: a media type and a component schema name ("" = none / any bytes).
  std::string_view request_type = {};  // "application/json", "application/octet-stream", "application/xml"
  std::string_view request_schema = {};
  int ok_status = 200;
  std::string_view response_type = {};  // "" = no body
  std::string_view response_schema = {};
  std::vector<Param> response_headers = {};
};

// Every row, in document order. Built on first use; immutable after.
const std::vector<RouteSpec>& RouteTable();

// The row of a /v1 request (area, bucket and object as ParseRoute split them), nullptr if none.
// A path segment in the template that is a literal ("/v1/daemon/mountpaths") must equal the
// route's; a "{param}" segment must be present (non-empty) and an absent one absent.
const RouteSpec* FindRoute(Method method, const Route& route);

// The S3 row of `method` on the service, a bucket or an object, nullptr if none.
const RouteSpec* FindS3Route(Method method, bool has_bucket, bool has_key);
// The first of `spec`'s S3 operations `ex` is, nullptr if none.
const s3::Operation* FindS3Operation(const RouteSpec& spec, const Exchange& ex);

// The bits of `action` in `spec` (unknown_action_bits when not listed).
auth::AccessAttrs ActionBits(const RouteSpec& spec, std::string_view action);
// The action of `spec` named `name`, nullptr if none.
const Action* FindAction(const RouteSpec& spec, std::string_view name);
// The `what` value of `spec` named `name`, nullptr if none.
const WhatValue* FindWhat(const RouteSpec& spec, std::string_view name);
// The error message for an unknown `what` value on `spec`.
std::string UnknownWhatMessage(const RouteSpec& spec, std::string_view what);

}  // namespace ais::router
