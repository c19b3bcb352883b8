// Bucket-level and multi-object actions (handlers/bucket_actions.cc), called by the /v1/buckets
// and /v1/objects routers: copy and rename buckets, summaries (GET action and HEAD "info"),
// reset-bprops, list/range/prefix operations and promote. Each that starts a job answers with
// the job ID as plain text.
#pragma once

#include <string>

#include "handlers/context.h"

namespace ais {

// POST /v1/buckets/<src>?bck_to=<uname> {"action":"copy-bck"|"move-bck"}.
Task<Handled> StartCopyOrMoveBucket(ServerContext& ctx, Exchange& ex, const std::string& bucket, const ActionMsg& msg);
// delete-listrange / evict-listrange (DELETE), prefetch-listrange / copy-listrange (POST),
// archive (PUT).
Task<Handled> StartListRange(ServerContext& ctx, Exchange& ex, const std::string& bucket, const ActionMsg& msg);
// GET /v1/buckets/[<bucket>] {"action":"summary-bck","value":BsummCtrlMsg}: 202 + job ID to start,
// then 202 while running and 200 + [BsummResult] when done. An empty bucket means all buckets.
Task<Handled> GetBucketSummary(ServerContext& ctx, Exchange& ex, const std::string& bucket, const ActionMsg& msg);
// HEAD /v1/buckets/<bucket>[/<prefix>]: props, and with ?bsumm_remote= the summary ("info").
Task<Handled> HeadBucket(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& prefix);
// PATCH {"action":"reset-bprops"}.
Task<Handled> ResetBucketProps(ServerContext& ctx, Exchange& ex, const std::string& bucket);
// POST /v1/objects/<bucket> {"action":"promote","name":<src>,"value":PromoteArgs}.
Task<Handled> Promote(ServerContext& ctx, Exchange& ex, const std::string& bucket, const ActionMsg& msg);
// The rechunk job with `value` {"objsize-limit","chunk-size","prefix"}; missing sizes come from
// the bucket's props (defined in handlers/buckets.cc).
Task<Handled> StartRechunkJob(ServerContext& ctx, Exchange& ex, const std::string& bucket, const nlohmann::json& value);

}  // namespace ais
