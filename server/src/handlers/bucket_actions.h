// Bucket-level and multi-object actions (handlers/bucket_actions.cc), called by the /v1/buckets
// and /v1/objects routers: copy and rename buckets, summaries (GET action and HEAD "info"),
// reset-bprops, list/range/prefix operations and promote. Each that starts a job answers with
// the job ID as plain text.
#pragma once

#include <string>

#include "service/context.h"

namespace ais {

// The rechunk job with `value` {"objsize-limit","chunk-size","prefix"}; missing sizes come from
// the bucket's props (defined in handlers/buckets.cc; also started by kind, node_actions.cc).
Task<Handled> StartRechunkJob(ServerContext& ctx, Exchange& ex, const std::string& bucket, const nlohmann::json& value);

}  // namespace ais
