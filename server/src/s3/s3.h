// The S3 front end: the S3 REST API (path style) over the same buckets and objects as the AIS API.
// Served at /s3/<bucket>/<key>, and at the root path when the cluster feature S3-API-via-Root is
// on (--s3-api-via-root, or set-config). Every reply, errors included, is S3's: XML bodies with
// S3 codes (s3/errors.h), never the AIS error JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/access.h"
#include "metrics/metrics.h"
#include "service/context.h"

namespace ais::s3 {

struct Request;  // s3/request.h
using Handler = Task<Handled> (*)(Request& r);

// Which requests of one method and path an S3 operation is: a query parameter present (or the
// other one), a header present. Empty: every request (a row's default, listed last).
struct Selector {
  std::string_view query = {};
  std::string_view or_query = {};
  std::string_view header = {};

  bool Matches(const Exchange& ex) const;
  std::string Describe() const;  // "?uploadId|?partNumber + x-amz-copy-source"; "" for the default
};

// One S3 operation: router/routes.cc lists them for each method and path, first match wins.
struct Operation {
  std::string_view name;  // "GetObject"
  Selector selector = {};
  auth::AccessAttrs bits;  // what the request's token must grant (AIS's bits for the S3 operation)
  Handler handler;
  Op op = Op::kOther;       // what the metrics count it as
  bool creates_bucket = false;  // CreateBucket: the one operation on a bucket that need not exist
};

// The bucket and key an S3 path names (decoded; the key path-cleaned as Go's path.Clean does).
struct Target {
  std::string bucket_name;  // "" for the service (ListBuckets)
  std::string key;          // "" for a bucket request
  Status error;             // a malformed path: InvalidURI / InvalidArgument
  std::string_view error_code;
};
Target ParseTarget(std::string_view path);

// The S3 part of the request path ("" or "/<bucket>[/<key>]", still percent-encoded) when the
// request is an S3 one: /s3[/...], or any path outside /v1 with the root feature on.
std::optional<std::string_view> S3PathOf(const ServerContext& ctx, std::string_view raw_path);

// Serves one S3 request: checks its signature and token (`bits`), resolves its bucket and calls
// `op`'s handler. No `op`: `unmatched` (400 InvalidRequest) when the method and path have
// operations but none for this request, else 405. Replies (an error too) before it returns.
Task<void> Serve(ServerContext& ctx, Exchange& ex, Target target, const Operation* op,
                 auth::AccessAttrs bits, std::string_view unmatched);

}  // namespace ais::s3
