// The S3 front end: the S3 REST API (path style) over the same buckets and objects as the AIS API.
// Served at /s3/<bucket>/<key>, and at the root path when the cluster feature S3-API-via-Root is
// on (--s3-api-via-root, or set-config). Every reply, errors included, is S3's: XML bodies with
// S3 codes (s3/errors.h), never the AIS error JSON.
#pragma once

#include <optional>
#include <string_view>

#include "service/context.h"

namespace ais::s3 {

// The S3 part of the request path ("" or "/<bucket>[/<key>]", still percent-encoded) when the
// request is an S3 one: /s3[/...], or any path outside /v1 with the root feature on.
std::optional<std::string_view> S3PathOf(const ServerContext& ctx, std::string_view raw_path);

// Serves one S3 request; `path` is S3PathOf's. Replies (an error too) before it returns.
Task<void> Serve(ServerContext& ctx, Exchange& ex, std::string_view path);

}  // namespace ais::s3
