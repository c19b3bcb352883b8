// The route table: every REST endpoint this server serves, as data. One row per (method, path
// template): the area the router dispatches it to, its query parameters and headers, the
// permission bits it needs (and, for endpoints that take an AIS action message, the bits of each
// action), its request body and its reply.
//
// Two readers, so that neither can drift from the other:
//   - access control (handlers/access.cc): RequiredAccess and ActionAccess look the request up
//     here; the bits are these rows, nothing else;
//   - the OpenAPI document (api/openapi.h): `GET /openapi.yaml`, `aistore-server --print-openapi`
//     and docs/openapi.yaml are printed from these rows.
// A unit test (routes_test.cc) checks the handlers against the table: every action string a
// handler compares and every query parameter a handler reads appears in some row.
//
// No I/O; the rows are built once and never change (safe to read from any thread).
#pragma once

#include <string_view>
#include <vector>

#include "api/route.h"
#include "auth/access.h"

namespace ais::api {

enum class Method { kGet, kHead, kPut, kPost, kDelete, kPatch };
std::string_view MethodName(Method m);  // "GET", ...

// A query parameter or header. `type` is a JSON-schema type: "string", "integer", "boolean".
struct Param {
  std::string_view name;
  std::string_view type;
  std::string_view description;
  bool required = false;
};

// One "action" of an AIS action message ({"action": ..., "name": ..., "value": ...}).
struct Action {
  std::string_view name;  // "" = a request with no action (e.g. DELETE a bucket: destroy it)
  auth::AccessAttrs bits;
  std::string_view summary;
};

// An S3 operation sharing a (method, path) with others, told apart by subresource or header.
struct S3Operation {
  std::string_view name;      // "GetObject"
  std::string_view selector;  // how the server picks it: "?uploadId", "x-amz-copy-source", "" (default)
  auth::AccessAttrs bits;
};

struct RouteSpec {
  Method method;
  std::string_view path;  // OpenAPI template: "/v1/objects/{bucket}/{object}"; "{object}" takes the rest
  // What the router dispatches on: Route::area for /v1 paths; "s3" for the S3 front end; "" for
  // the paths outside /v1 (/metrics, /openapi.yaml).
  std::string_view area;
  std::string_view summary;
  std::string_view description = {};

  // Access (handlers/access.h). `open`: no token needed. Otherwise `bits` before the handler
  // runs (0 with by_action: a valid token now, the action's bits once the message is read).
  bool open = false;
  auth::AccessAttrs bits = 0;
  bool on_bucket = false;  // the bits are checked against the path's bucket, else the cluster
  bool by_action = false;
  std::vector<Action> actions = {};  // the action message's "action" values
  auth::AccessAttrs unknown_action_bits = auth::kAdmin;  // an action not listed (its handler refuses it)
  // A query parameter that changes the bits when present (PUT an object with ?append_type: APPEND).
  std::string_view bits_query = {};
  auth::AccessAttrs bits_query_bits = 0;

  std::vector<Param> query = {};
  std::vector<Param> headers = {};
  std::vector<S3Operation> s3_operations = {};

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

// The bits of `action` in `spec` (unknown_action_bits when not listed).
auth::AccessAttrs ActionBits(const RouteSpec& spec, std::string_view action);

}  // namespace ais::api
