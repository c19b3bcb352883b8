#include "router/routes.h"

#include "handlers/handlers.h"
#include "s3/request.h"

namespace ais::router {

using namespace auth::bits;  // the permission bits
using auth::AccessAttrs;

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kGet: return "GET";
    case Method::kHead: return "HEAD";
    case Method::kPut: return "PUT";
    case Method::kPost: return "POST";
    case Method::kDelete: return "DELETE";
    case Method::kPatch: return "PATCH";
  }
  return "GET";
}

namespace {

using M = Method;

// The error of an unknown `what` on a node, as AIS's target words it.
constexpr std::string_view kUnknownNodeQuery = "invalid '/v1/daemon' request: unrecognized 'what={}' query";

// Parameters several rows share.
const Param kProvider{"provider", "string", "bucket provider: `ais` (default) or `aws` (also `s3`) for a remote S3 bucket"};
const Param kNamespace{"namespace", "string",
                       "bucket namespace: `@#name` a local one, `@alias#name` / `@uuid#name` a remote AIS cluster's "
                       "(`@@#`: every attached cluster, listing buckets only); none or `@#`: the global one"};
const Param kPresence{"presence", "integer",
                      "AIS flt-presence: 0 exists inside and/or outside the cluster, 1 the same without "
                      "properties, 2 present in the cluster, 3 the same without properties, 4 anywhere in the "
                      "cluster, 5 only outside the cluster"};
const Param kJobUuid{"uuid", "string", "job ID"};
const Param kAisToken{"Authorization", "string", "`Bearer <JWT>` when the server requires tokens"};
const Param kAccept{"Accept", "string", "`application/msgpack` to get a msgpack reply (default JSON)"};
const Param kNodeId{"Ais-Node-Id", "string", "the node to ask: the target's or the proxy's daemon ID (see `what=smap`)",
                    true};
const Param kS3Token{"X-Amz-Security-Token", "string",
                     "the AIS token of a presigned URL (also as the header of the same name)"};

// Action-message bodies of the cluster and node: PUT /v1/cluster, PUT /v1/daemon.
std::vector<Action> ClusterActions() {
  return {{"set-config", kAdmin, "set the cluster config's run-time keys: features, auth.client_auth_required, log.level, space, lru",
           LocalOnly(SetConfig)},
          {"start", kAdmin, "start a job by kind (value: xact.ArgsMsg {Kind, Bck, ...}); replies the job ID",
           LocalOnly(StartJobByKind)},
          {"stop", kAdmin, "abort the jobs the value selects (ID, Kind, Bck)", LocalOnly(StopJobs)}};
}

std::vector<Param> MountpathQuery() {
  return {{"dntres", "boolean", "detach-mp, disable-mp: true runs no resilver (refused while one runs)"},
          {"mountpath_label", "string", "attach-mp: AIS mountpath labels are not supported (501 if set)"}};
}

std::vector<Action> MountpathActions() {
  return {{"enable-mp", kAdmin, "enable a mountpath", LocalOnly(EnableMountpath)},
          {"disable-mp", kAdmin, "disable a mountpath", LocalOnly(DisableMountpath)},
          {"attach-mp", kAdmin, "attach a directory as a new mountpath (PUT); a resilver job follows",
           LocalOnly(AttachMountpath)},
          {"detach-mp", kAdmin,
           "detach a mountpath (DELETE): leaving until a resilver job moved its objects off, then gone",
           LocalOnly(DetachMountpath)}};
}

// The keys set-config takes from the query.
std::vector<Param> SetConfigQuery() {
  return {{"features", "string", "cluster feature flags: names (comma-separated) or a number"},
          {"auth.client_auth_required", "boolean", "require tokens (turning it on takes an admin token)"},
          {"auth.enabled", "boolean", "the pre-5.0 name of auth.client_auth_required"},
          {"log.level", "string", "the server log's level: info, warning or error (or AIS 0-5)"},
          {"space.cleanupwm", "integer", "used capacity (%) above which writes run the space cleanup"},
          {"space.lowwm", "integer", "eviction frees space down to this used capacity (%)"},
          {"space.highwm", "integer", "used capacity (%) on a mountpath above which the lru job evicts"},
          {"space.out_of_space", "integer", "used capacity (%) above which writes are refused (507)"},
          {"lru.enabled", "boolean", "whether new remote buckets are evicted from (lru.enabled)"},
          {"lru.dont_evict_time", "string", "objects accessed this recently are never evicted (Go duration)"},
          {"lru.capacity_upd_time", "string", "the longest period between capacity checks (Go duration)"}};
}

// The job queries of GET /v1/cluster and /v1/daemon (body: xact.QueryMsg).
std::vector<WhatValue> JobQueries() {
  return {{"status", "one job's status (by ID or kind)", QueryJobStatus},
          {"status_all", "the status of every job the query selects", QueryJobsStatus},
          {"qryxstats", "job snapshots (xact.SnapsMsg) per target", QueryJobSnapshots},
          {"running_all", "running jobs as kind[ID]", QueryRunningJobs}};
}

// GET /v1/daemon?what=: a node's queries, answered by the face asked (the target's for
// /v1/daemon, by Ais-Node-Id for /v1/reverse/daemon).
std::vector<WhatValue> NodeQueries() {
  std::vector<WhatValue> w = {
      {"smap", "the cluster map", QuerySmap},
      {"bmd", "the bucket metadata", QueryBmd},
      {"config", "the node's config", QueryNodeConfig},
      {"snode", "the node's address and ID", QuerySnode},
      {"node_status", "status, stats, capacity, system info", QueryNodeStatus},
      {"node_stats", "stats and capacity", QueryNodeStats},
      {"metrics", "the metric names and kinds", QueryMetricNames},
      {"sysinfo", "memory and CPU", QuerySysinfo},
      {"log", "the log (severity=, all=true: a .tar.gz)", QueryLog},
      {"software_version", "the AIS version this server speaks", QuerySoftwareVersion},
      {"tls_certificate", "the TLS certificate (404 over plain HTTP)", QueryTlsCertificate},
      {"mountpaths", "the target's mountpaths: available, disabled", QueryNodeMountpaths},
      {"disk", "the target's disks and their rates", QueryDisks},
      {"remote", "remote AIS clusters the target knows (as GET /v1/cluster?what=remote)", QueryNodeRemote}};
  for (WhatValue& j : JobQueries()) w.push_back(j);
  return w;
}

// Bucket props that set where a remote bucket's data comes from and as whom (`extra.aws.endpoint`,
// `extra.aws.profile`): cluster-level settings in AIS (a bucket owner who could set them would
// point everyone's reads at an address of their choice), so ADMIN.
AccessAttrs BackendSourceBits(const nlohmann::json& props) {
  if (!props.is_object()) return 0;
  auto extra = props.find("extra");
  if (extra == props.end() || !extra->is_object()) return 0;
  auto aws = extra->find("aws");
  const bool names = aws != extra->end() && aws->is_object() && (aws->contains("endpoint") || aws->contains("profile"));
  return names ? kAdmin : 0;
}

// set-bprops: changing a bucket's `access` is an ACL change; and the backend source's bits.
AccessAttrs BucketPropsBits(const nlohmann::json& props) {
  return BackendSourceBits(props) | (props.is_object() && props.contains("access") ? kBckSetAcl : 0);
}

std::vector<RouteSpec> Build() {
  std::vector<RouteSpec> t;
  // ---- outside /v1 -------------------------------------------------------------------------
  t.push_back({.method = M::kGet, .path = "/metrics", .area = "", .summary = "Prometheus metrics",
               .description = "Request counters, bytes, errors and latency histograms per operation, in-flight "
                              "requests, connections, jobs, mountpath capacity, uptime (docs/metrics.md). No token.",
               .open = true, .response_type = "text/plain", .response_schema = "PrometheusText"});
  t.push_back({.method = M::kGet, .path = "/openapi.yaml", .area = "", .summary = "this OpenAPI document",
               .description = "The document of every endpoint, printed from the server's route table. No token.",
               .open = true, .response_type = "application/yaml", .response_schema = "OpenApiDocument"});
  // ---- health, tokens ----------------------------------------------------------------------
  t.push_back({.method = M::kGet, .path = "/v1/health", .area = "health", .summary = "liveness and readiness",
               .serve = LocalOnly(GetHealth), .open = true,
               .response_headers = {{"Ais-Node-Uptime", "integer", "nanoseconds since the server started"},
                                    {"Ais-Cluster-Uptime", "integer", "nanoseconds since the cluster started"}}});
  t.push_back({.method = M::kHead, .path = "/v1/health", .area = "health", .summary = "liveness (headers only)",
               .serve = LocalOnly(GetHealth), .open = true});
  t.push_back({.method = M::kPost, .path = "/v1/tokens", .area = "tokens",
               .summary = "AuthN: validate this cluster's registration (or, with a token, the token)",
               .serve = LocalOnly(ValidateToken), .open = true, .headers = {kAisToken}, .request_type = "application/json",
               .request_schema = "AuthnServerConf"});
  t.push_back({.method = M::kDelete, .path = "/v1/tokens", .area = "tokens", .summary = "AuthN: revoke tokens",
               .serve = LocalOnly(RevokeTokens), .open = true, .headers = {kAisToken}, .request_type = "application/json",
               .request_schema = "TokenList"});
  // ---- daemon (this node), reverse (a node by ID), cluster ---------------------------------
  t.push_back({.method = M::kGet, .path = "/v1/daemon", .area = "daemon", .summary = "query this node",
               .what = NodeQueries(), .unknown_what = kUnknownNodeQuery, .bits = kShowCluster,
               .query = {{"what", "string", "the query (x-ais-what lists its values)", true},
                         {"severity", "string", "what=log: info (default), warning or error"},
                         {"all", "boolean", "what=log: all logs as a tar.gz"}},
               .headers = {kAisToken, kAccept},
               .request_type = "application/json", .request_schema = "QueryMsg",
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kPut, .path = "/v1/daemon", .area = "daemon", .summary = "node action",
               .bits = kAdmin, .actions = ClusterActions(), .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg",
               .response_type = "text/plain"});
  for (M m : {M::kPost, M::kPut, M::kDelete}) {
    t.push_back({.method = m, .path = "/v1/daemon/mountpaths", .area = "daemon",
                 .summary = "attach, detach, enable or disable a mountpath (each followed by a resilver job)",
                 .bits = kAdmin, .actions = MountpathActions(), .query = MountpathQuery(),
                 .headers = {kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg"});
  }
  t.push_back({.method = M::kGet, .path = "/v1/reverse/daemon", .area = "reverse",
               .summary = "query a node by ID (the proxy or the target face of this server)",
               .what = NodeQueries(), .unknown_what = kUnknownNodeQuery, .by_node = true, .bits = kShowCluster,
               .query = {{"what", "string", "as GET /v1/daemon", true},
                         {"severity", "string", "what=log: info (default), warning or error"},
                         {"all", "boolean", "what=log: all logs as a tar.gz"}},
               .headers = {kNodeId, kAisToken, kAccept},
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kPut, .path = "/v1/reverse/daemon", .area = "reverse",
               .summary = "a node action on a node by ID (as PUT /v1/daemon)", .by_node = true, .bits = kAdmin,
               .actions = ClusterActions(), .headers = {kNodeId, kAisToken}, .request_type = "application/json",
               .request_schema = "ActionMsg", .response_type = "text/plain"});
  for (M m : {M::kPost, M::kPut, M::kDelete}) {
    t.push_back({.method = m, .path = "/v1/reverse/daemon/mountpaths", .area = "reverse",
                 .summary = "a mountpath action on a node by ID (as /v1/daemon/mountpaths)", .by_node = true,
                 .bits = kAdmin, .actions = MountpathActions(), .query = MountpathQuery(),
                 .headers = {kNodeId, kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg"});
  }
  std::vector<WhatValue> cluster_queries = {
      {"cluster_config", "the cluster config", QueryClusterConfig},
      {"backends", "the cloud backends configured", QueryBackends},
      {"remote", "remote AIS clusters attached (meta.RemAisVec; each probed now)", QueryRemoteClusters},
      {"smap", "the cluster map", QuerySmap},
      {"bmd", "the bucket metadata", QueryBmd},
      {"mountpaths", "every target's mountpaths", QueryClusterMountpaths},
      {"target_ips", "the targets' addresses", QueryTargetIps},
      {"node_stats", "every node's stats", QueryClusterNodeStats},
      {"sysinfo", "every target's memory and CPU", QueryClusterSysinfo},
      {"node_status", "the target's status", QueryNodeStatus},
      {"log", "the target's log", QueryLog}};
  for (WhatValue& j : JobQueries()) cluster_queries.push_back(j);
  t.push_back({.method = M::kGet, .path = "/v1/cluster", .area = "cluster", .summary = "query the cluster",
               .what = std::move(cluster_queries), .unknown_what = "unexpected query [what={}]", .bits = kShowCluster,
               .query = {{"what", "string", "the query (x-ais-what lists its values)", true}},
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "QueryMsg",
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kPut, .path = "/v1/cluster", .area = "cluster", .summary = "cluster action",
               .bits = kAdmin, .actions = ClusterActions(), .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg", .response_type = "text/plain"});
  // AIS 5.0's path is set-config (apc.URLPathCluSetConf, what the CLI's `ais config cluster`
  // sends); setconfig is the older one, still served.
  for (const char* path : {"/v1/cluster/set-config", "/v1/cluster/setconfig"}) {
    t.push_back({.method = M::kPut, .path = path, .area = "cluster", .summary = "set run-time config keys from the query",
                 .serve = LocalOnly(SetConfigByQuery), .bits = kAdmin, .query = SetConfigQuery(), .headers = {kAisToken}});
  }
  // `ais cluster remote-attach ALIAS=URL` / `remote-detach ALIAS`: the config's backend.ais.
  const Param kRemoteWhat{"what", "string", "`remote` (a remote AIS cluster)", true};
  const Param kRemoteAlias{"Ais-Remote-Ais-Alias", "string", "the remote cluster's alias (or, to detach, its UUID)", true};
  t.push_back({.method = M::kPut, .path = "/v1/cluster/attach", .area = "cluster",
               .summary = "attach a remote AIS cluster (backend.ais[alias] = [url])",
               .what = {{"remote", "attach the remote cluster the headers name", AttachRemoteCluster}},
               .unknown_what = "unexpected query [what={}]", .bits = kAdmin, .query = {kRemoteWhat},
               .headers = {kRemoteAlias, {"Ais-Remote-Ais-Url", "string", "the remote cluster's URL (http or https)", true},
                           kAisToken}});
  t.push_back({.method = M::kPut, .path = "/v1/cluster/detach", .area = "cluster",
               .summary = "detach a remote AIS cluster",
               .what = {{"remote", "detach the remote cluster the header names", DetachRemoteCluster}},
               .unknown_what = "unexpected query [what={}]", .bits = kAdmin, .query = {kRemoteWhat},
               .headers = {kRemoteAlias, kAisToken}});
  // ---- buckets -------------------------------------------------------------------------------
  t.push_back({.method = M::kGet, .path = "/v1/buckets", .area = "buckets", .summary = "list buckets (or summarize all)",
               .by_action = true,
               .actions = {{"", kListBuckets, "list buckets (no message)", LocalOnly(ListBuckets)},
                           {"list", kListBuckets, "list buckets", LocalOnly(ListBuckets)},
                           {"summary-bck", kBckHead, "bucket summary (202 + job ID, then 200 + results)",
                            LocalOnly(GetBucketSummary)},
                           {"show-inventory", kListBuckets, "every bucket's inventories (of the provider asked)",
                            LocalOnly(ShowInventory)}},
               .unknown_action_bits = kListBuckets,
               .query = {kProvider, kNamespace, kPresence}, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg",
               .response_type = "application/json", .response_schema = "BucketList"});
  t.push_back({.method = M::kHead, .path = "/v1/buckets/{bucket}", .area = "buckets",
               .summary = "bucket properties (headers), or a running summary", .serve = Both(HeadBucket),
               .bits = kBckHead, .on_bucket = true,
               .query = {kProvider, kNamespace, kPresence,
                         {"bsumm_remote", "boolean", "start (or poll, with uuid) a bucket summary"},
                         kJobUuid},
               .headers = {kAisToken},
               .response_headers = {{"Ais-Bucket-Props", "string", "the bucket's properties (JSON)"},
                                    {"Ais-Bucket-Summ", "string", "a summary result (JSON), with bsumm_remote"},
                                    {"Ais-Xaction-Id", "string", "the summary job's ID"}}});
  t.push_back({.method = M::kHead, .path = "/v1/buckets/{bucket}/{prefix}", .area = "buckets",
               .summary = "summary of the objects under a prefix (with bsumm_remote)", .serve = Both(HeadBucket),
               .bits = kBckHead,
               .on_bucket = true,
               .query = {kProvider, {"bsumm_remote", "boolean", "start (or poll, with uuid) a summary", true}, kJobUuid,
                         kPresence},
               .headers = {kAisToken}});
  t.push_back({.method = M::kGet, .path = "/v1/buckets/{bucket}", .area = "buckets",
               .summary = "list objects (LsoMsg in the action message), summary, inventory", .op = Op::kList,
               .on_bucket = true,
               .by_action = true,
               .actions = {{"", kObjList, "list objects (no message: the defaults)", Both(ListObjects)},
                           {"list", kObjList, "list objects (value: LsoMsg)", Both(ListObjects)},
                           {"summary-bck", kBckHead, "bucket summary", Both(GetBucketSummary)},
                           {"show-inventory", kBckHead, "describe the bucket's inventories", Both(ShowInventory)}},
               .unknown_action_bits = kObjList,
               .query = {kProvider, kNamespace}, .headers = {kAisToken, kAccept, {"Ais-Inv-Name", "string", "inventory name"}},
               .request_type = "application/json", .request_schema = "ActionMsg",
               .response_type = "application/json", .response_schema = "LsoRes"});
  t.push_back({.method = M::kPost, .path = "/v1/buckets/{bucket}", .area = "buckets",
               .summary = "create a bucket; start a bucket job", .on_bucket = true, .by_action = true,
               .actions = {{.name = "create-bck", .bits = kCreateBucket, .summary = "create the bucket (value: optional props)",
                            .serve = LocalAndRemote(CreateBucket, CreateRemoteBucket), .resolve = false,
                            .value_bits = BackendSourceBits},
                           {.name = "move-bck", .bits = kMoveBucket, .summary = "rename to bck_to",
                            .serve = LocalAndRemote(StartCopyOrMoveBucket, MoveRemoteBucket), .resolve = false},
                           {"copy-bck", kAccessRW, "copy to bck_to (value: CopyBckMsg)", Both(StartCopyOrMoveBucket)},
                           {"copy-listrange", kAccessRW, "copy listed/templated objects", Both(StartListRange)},
                           {"etl-bck", kAccessRW, "transform to bck_to through an ETL (value: TCBMsg, \"id\": the ETL)",
                            Both(StartTransformBucket)},
                           {"etl-listrange", kAccessRW, "transform listed/templated objects through an ETL (value: TCOMsg)",
                            Both(StartListRange)},
                           {"prefetch-listrange", kAccessRW, "prefetch listed/templated remote objects",
                            Both(StartListRange)},
                           {"rechunk", kAccessRW, "rewrite objects with new chunk sizes", LocalOnly(StartRechunk)},
                           {"make-n-copies", kAccessRW, "keep every object in N copies on N mountpaths (value: N; job)",
                            Both(MakeNCopies)},
                           {"create-inventory", kAdmin, "create a bucket inventory (job)", Both(CreateInventory)}},
               .query = {kProvider, kNamespace, {"bck_to", "string", "destination bucket (`ais/@#/name/`)"}},
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg",
               .response_type = "text/plain"});
  t.push_back({.method = M::kPut, .path = "/v1/buckets/{bucket}", .area = "buckets",
               .summary = "multi-object archive", .on_bucket = true, .by_action = true,
               .actions = {{"archive", kAccessRW, "archive listed/templated objects into one shard", Both(StartListRange)}},
               .query = {kProvider, kNamespace}, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg", .response_type = "text/plain"});
  t.push_back({.method = M::kDelete, .path = "/v1/buckets/{bucket}", .area = "buckets",
               .summary = "destroy a bucket; delete or evict objects; destroy an inventory", .on_bucket = true,
               .by_action = true,
               .actions = {{"", kDestroyBucket, "no body: destroy the bucket", LocalAndRemote(DestroyBucket, DestroyRemoteBucket)},
                           {"destroy-bck", kDestroyBucket, "destroy the bucket", LocalAndRemote(DestroyBucket, DestroyRemoteBucket)},
                           {"delete-listrange", kObjDelete, "delete listed/templated objects (job)", Both(StartListRange)},
                           {"evict-listrange", kObjDelete, "evict listed/templated remote objects (job)",
                            Both(StartListRange)},
                           {"evict-remote-bck", kObjDelete, "evict a remote bucket's cached objects",
                            RemoteOnly(EvictRemoteBucket)},
                           {"destroy-inventory", kDestroyBucket | kAdmin, "destroy an inventory", Both(DestroyInventory)}},
               .query = {kProvider, kNamespace, {"keep_bck_md", "boolean", "evict: keep the bucket's metadata"}},
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg"});
  t.push_back({.method = M::kPatch, .path = "/v1/buckets/{bucket}", .area = "buckets", .summary = "set bucket properties",
               .description = "set-bprops with an `access` value also needs BCK-SET-ACL.", .on_bucket = true,
               .by_action = true,
               .actions = {{.name = "set-bprops", .bits = kPatch, .summary = "set properties (value: partial props)",
                            .serve = Both(SetBucketProps), .value_bits = BucketPropsBits},
                           {"reset-bprops", kPatch, "reset properties to the defaults", Both(ResetBucketProps)}},
               .unknown_action_bits = kPatch, .query = {kProvider, kNamespace}, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg"});
  // ---- objects -------------------------------------------------------------------------------
  const Param blob_chunk{"Ais-Blob-Chunk", "string", "blob download: chunk size"};
  const Param blob_workers{"Ais-Blob-Workers", "integer", "blob download: parallel range readers"};
  t.push_back({.method = M::kGet, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "read an object (or a range, or a file in an archived object)",
               .serve = LocalAndRemote(GetObject, GetRemoteObject), .op = Op::kGet, .bits = kGet, .on_bucket = true,
               .query = {kProvider, kNamespace,
                         {"archpath", "string", "a file inside the object (a tar/tgz/zip/tar.lz4 shard)"},
                         {"archregx", "string", "files matching (with archmode)"},
                         {"archmode", "string", "regexp, prefix, suffix, substr, wdskey"},
                         {"etl_name", "string", "transforming GET: the output of this ETL (the whole object; Range is not applied)"},
                         {"etl_args", "string", "passed to the transformer as is"},
                         {"etl_pipeline", "string", "further ETLs, comma-separated (hpush)"},
                         {"latest-ver", "boolean", "remote: check the remote version first"}},
               .headers = {kAisToken, {"Range", "string", "bytes=a-b (one range)"},
                           {"Ais-Blob-Download", "boolean", "remote: fetch in parallel ranges first"}, blob_chunk,
                           blob_workers, {"Ais-Blob-Threshold", "string", "remote: blob download above this size"}},
               .response_type = "application/octet-stream",
               .response_headers = {{"Ais-Checksum-Type", "string", "checksum type"},
                                    {"Ais-Checksum-Value", "string", "checksum value"},
                                    {"Ais-Version", "string", "object version"},
                                    {"Ais-Atime", "string", "access time (ns)"}}});
  t.push_back({.method = M::kHead, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "object properties (headers)", .serve = Both(HeadObject), .op = Op::kHead, .bits = kObjHead,
               .on_bucket = true,
               .query = {kProvider, kNamespace, kPresence,
                         {"props", "string", "properties to return (comma-separated; v2 HEAD)"},
                         {"latest-ver", "boolean", "remote: check the remote version"}},
               .headers = {kAisToken},
               .response_headers = {{"Ais-Present", "boolean", "cached/present"},
                                    {"Ais-Checksum-Type", "string", "checksum type"},
                                    {"Ais-Checksum-Value", "string", "checksum value"},
                                    {"Ais-Version", "string", "object version"},
                                    {"Ais-Atime", "string", "access time (ns)"},
                                    {"Ais-Custom-Md", "string", "custom metadata k=v,..."},
                                    {"Ais-Chunks-Count", "integer", "number of chunks (chunked objects)"}}});
  t.push_back({.method = M::kPut, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "write an object; append; copy (object_to); a multipart part; add to a shard",
               .serve = Both(PutObject), .op = Op::kPut, .bits = kPut, .on_bucket = true, .bits_query = "append_type",
               .bits_query_bits = kAppend, .bits_query_op = Op::kAppend,
               .query = {kProvider, kNamespace,
                         {"append_type", "string", "append or flush (APPEND permission)"},
                         {"append_handle", "string", "the handle a previous append returned"},
                         {"object_to", "string", "copy the object to `ais/@#/bucket/name`"},
                         {"uploadId", "string", "multipart upload ID (with partNumber)"},
                         {"partNumber", "integer", "multipart part number (1..10000)"},
                         {"skip_vc", "boolean", "skip version and checksum checks"},
                         {"archpath", "string", "a file to add to the shard"},
                         {"archmime", "string", "the shard's format"}},
               .headers = {kAisToken, {"Ais-Checksum-Type", "string", "checksum of the body to verify"},
                           {"Ais-Checksum-Value", "string", "checksum of the body to verify"},
                           {"Ais-Pine", "integer", "shard append: 0 new, 1 append, 2 append or put"}},
               .request_type = "application/octet-stream"});
  t.push_back({.method = M::kDelete, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "delete an object (or abort a multipart upload)",
               .serve = LocalAndRemote(DeleteObject, DeleteRemoteObject), .op = Op::kDelete, .bits = kObjDelete,
               .on_bucket = true,
               .query = {kProvider, kNamespace, {"uploadId", "string", "abort this multipart upload"}},
               .headers = {kAisToken}});
  t.push_back({.method = M::kPost, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "rename; multipart upload (start, complete, abort); lock check", .on_bucket = true,
               .by_action = true,
               .actions = {{"rename-obj", kObjMove, "rename to `name`", LocalOnly(RenameObject)},
                           {"mpt-upload", kAccessRW, "start a multipart upload; replies the upload ID",
                            Both(StartMultipartUpload)},
                           {"mpt-complete", kAccessRW, "complete a multipart upload (value: parts)",
                            Both(CompleteMultipartUpload)},
                           {"mpt-abort", kAccessRW, "abort a multipart upload", Both(AbortMultipartUpload)},
                           {"check-lock", kObjHead, "whether the object is locked", Both(CheckObjectLock)}},
               .query = {kProvider, kNamespace, {"uploadId", "string", "the multipart upload (mpt-complete)"}},
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg",
               .response_type = "text/plain"});
  t.push_back({.method = M::kPatch, .path = "/v1/objects/{bucket}/{object}", .area = "objects",
               .summary = "set custom metadata", .on_bucket = true, .by_action = true,
               .actions = {{"", kObjUpdate, "set custom metadata (value: {key: value})", Both(SetObjectCustomProps)}},
               .unknown_action_bits = kObjUpdate,
               .query = {kProvider, kNamespace, {"set-new-custom", "boolean", "replace (not merge) custom metadata"},
                         {"uploadId", "string", "of a multipart upload in progress"}},
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "ActionMsg"});
  t.push_back({.method = M::kPost, .path = "/v1/objects/{bucket}", .area = "objects",
               .summary = "promote files; start a blob download", .on_bucket = true, .by_action = true,
               .actions = {{"promote", kPromote, "promote a file or directory under --promote-root", LocalOnly(Promote)},
                           {"blob-download", kAccessRW, "download a remote object in parallel ranges (job)",
                            RemoteOnly(StartBlobDownload)}},
               .query = {kProvider, kNamespace}, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "ActionMsg", .response_type = "text/plain"});
  // ---- GetBatch ------------------------------------------------------------------------------
  for (std::string_view path : {std::string_view("/v1/ml/moss"), std::string_view("/v1/ml/moss/{bucket}")}) {
    t.push_back({.method = M::kGet, .path = path, .area = "ml",
                 .summary = "GetBatch: many objects (or archived files) in one ordered archive or multipart reply",
                 .description = "Each bucket named is checked for GET.", .serve = LocalOnly(GetBatch),
                 .op = Op::kGetBatch, .by_action = true,
                 .query = {kProvider, {"coloc", "integer", "colocation hint (0, 1, 2)"}}, .headers = {kAisToken},
                 .request_type = "application/json", .request_schema = "MossReq",
                 .response_type = "application/octet-stream"});
  }
  // ---- download jobs (spec backends-and-downloads §7) -----------------------------------------
  const char* dl_bucket_check = "The body names the bucket: read-write on it is checked in the handler (and "
                                "CREATE-BUCKET where the job creates an ais:// bucket).";
  t.push_back({.method = M::kPost, .path = "/v1/download", .area = "download",
               .summary = "start a download job: single, range, multi or backend (body: dload.Body)",
               .description = dl_bucket_check, .serve = LocalOnly(StartDownload), .by_action = true,
               .headers = {kAisToken}, .request_type = "application/json", .request_schema = "AnyJson",
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kGet, .path = "/v1/download", .area = "download",
               .summary = "download jobs (body {} or {regex}), or one job's status with its files (body {id})",
               .serve = LocalOnly(GetDownloads), .bits = kShowCluster, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "AnyJson",
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kDelete, .path = "/v1/download/abort", .area = "download",
               .summary = "abort a download job (body {id})",
               .description = "Read-write on the job's bucket is checked in the handler.",
               .serve = LocalOnly(AbortDownload), .by_action = true, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "AnyJson"});
  t.push_back({.method = M::kDelete, .path = "/v1/download/remove", .area = "download",
               .summary = "remove a finished download job (body {id})",
               .description = "Read-write on the job's bucket is checked in the handler.",
               .serve = LocalOnly(RemoveDownload), .by_action = true, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "AnyJson"});
  // ---- job lists this server has none of ----------------------------------------------------
  t.push_back({.method = M::kGet, .path = "/v1/sort", .area = "sort", .summary = "dSort jobs (none run here: [])",
               .serve = LocalOnly(ListSortJobs), .bits = kShowCluster,
               .query = {kJobUuid, {"id", "string", "job ID"}, {"only_active", "boolean", "running only"},
                         {"regex", "string", "filter by description"}},
               .headers = {kAisToken}, .response_type = "application/json", .response_schema = "AnyJson"});
  // ---- ETL: transformers as local processes (spec etl.md §2) ---------------------------------
  const Param etl_uuid{"uuid", "string", "an offline job's ID: that job's object errors"};
  t.push_back({.method = M::kGet, .path = "/v1/etl", .area = "etl", .summary = "list ETLs",
               .serve = LocalOnly(ListEtls), .bits = kAdmin, .headers = {kAisToken},
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kPut, .path = "/v1/etl", .area = "etl",
               .summary = "initialize an ETL: its transformer starts as a local process",
               .description = "Runs user code: allowed with tokens required (ADMIN), on a loopback-only server, or "
                              "with --etl on. Only the official Python runtime image runs (Etl.init_class).",
               .serve = LocalOnly(InitEtl), .bits = kAdmin, .headers = {kAisToken},
               .request_type = "application/json", .request_schema = "AnyJson", .response_type = "text/plain"});
  for (M m : {M::kGet, M::kHead, M::kPut}) {
    t.push_back({.method = m, .path = "/v1/etl/_object/{object}", .area = "etl",
                 .summary = "a transformer reads an object: <etl>/<secret>/<escaped uname>",
                 .description = "The ETL's secret (in AIS_TARGET_URL) is the only check.",
                 .serve = LocalOnly(EtlObject), .open = true, .response_type = "application/octet-stream"});
  }
  t.push_back({.method = M::kGet, .path = "/v1/etl/{name}", .area = "etl", .summary = "an ETL's init message and object errors",
               .serve = LocalOnly(ShowEtl), .bits = kAdmin, .query = {etl_uuid}, .headers = {kAisToken},
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kDelete, .path = "/v1/etl/{name}", .area = "etl", .summary = "stop and remove an ETL",
               .serve = LocalOnly(DeleteEtl), .bits = kAdmin, .headers = {kAisToken}});
  t.push_back({.method = M::kPost, .path = "/v1/etl/{name}/start", .area = "etl", .summary = "restart a stopped ETL",
               .serve = LocalOnly(StartEtl), .bits = kAdmin, .headers = {kAisToken}, .response_type = "text/plain"});
  t.push_back({.method = M::kPost, .path = "/v1/etl/{name}/stop", .area = "etl",
               .summary = "stop an ETL's transformer (stage Aborted)", .serve = LocalOnly(StopEtl), .bits = kAdmin,
               .headers = {kAisToken}});
  t.push_back({.method = M::kGet, .path = "/v1/etl/{name}/logs", .area = "etl",
               .summary = "the transformer's output (base64), also after it stopped", .serve = LocalOnly(EtlLogs),
               .bits = kAdmin, .headers = {kAisToken}, .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kGet, .path = "/v1/etl/{name}/health", .area = "etl", .summary = "the transformer's state",
               .serve = LocalOnly(EtlHealth), .bits = kAdmin, .headers = {kAisToken},
               .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kGet, .path = "/v1/etl/{name}/metrics", .area = "etl",
               .summary = "the transformer's CPU (average cores) and resident memory", .serve = LocalOnly(EtlMetrics),
               .bits = kAdmin, .headers = {kAisToken}, .response_type = "application/json", .response_schema = "AnyJson"});
  t.push_back({.method = M::kGet, .path = "/v1/etl/{name}/{sub}", .area = "etl",
               .summary = "logs/<target ID>: the logs of this node; anything else: 400", .serve = LocalOnly(EtlOther),
               .bits = kAdmin, .headers = {kAisToken}, .response_type = "application/json", .response_schema = "AnyJson"});
  // ---- S3 front end --------------------------------------------------------------------------
  const Param s3_auth{"Authorization", "string", "SigV4 (accepted unchecked without tokens) or `Bearer <JWT>`"};
  const Param s3_sec{"X-Amz-Security-Token", "string", "the AIS token when tokens are required"};
  const std::vector<Param> list_q = {{"list-type", "integer", "2: ListObjectsV2"},
                                     {"prefix", "string", "key prefix"},
                                     {"delimiter", "string", "group keys by this"},
                                     {"max-keys", "integer", "page size"},
                                     {"encoding-type", "string", "url"},
                                     {"continuation-token", "string", "V2 page token"},
                                     {"start-after", "string", "V2: keys after this"},
                                     {"fetch-owner", "boolean", "V2: include owners"},
                                     {"marker", "string", "V1 page marker"},
                                     {"location", "string", "GetBucketLocation"},
                                     {"versioning", "string", "GetBucketVersioning"},
                                     {"uploads", "string", "ListMultipartUploads"},
                                     kS3Token};
  t.push_back({.method = M::kGet, .path = "/s3", .area = "s3", .summary = "S3 ListBuckets", .bits = kListBuckets,
               .query = {kS3Token}, .headers = {s3_auth, s3_sec}, .s3_operations = {{.name = "ListBuckets", .bits = kListBuckets, .handler = s3::ListBuckets}},
               .response_type = "application/xml", .response_schema = "S3Xml"});
  t.push_back({.method = M::kGet, .path = "/s3/{bucket}", .area = "s3",
               .summary = "S3 ListObjects (V1/V2), GetBucketLocation, GetBucketVersioning, ListMultipartUploads",
               .bits = kObjList, .on_bucket = true, .query = list_q, .headers = {s3_auth, s3_sec},
               .s3_operations = {{.name = "GetBucketLocation", .selector = {.query = "location"}, .bits = kBckHead,
                                  .handler = s3::GetBucketLocation},
                                 {.name = "GetBucketVersioning", .selector = {.query = "versioning"}, .bits = kBckHead,
                                  .handler = s3::GetBucketVersioning},
                                 {.name = "ListMultipartUploads", .selector = {.query = "uploads"}, .bits = kObjList,
                                  .handler = s3::ListMultipartUploads},
                                 {.name = "ListObjectsV2", .selector = {.query = "list-type"}, .bits = kObjList,
                                  .handler = s3::ListObjects, .op = Op::kList},
                                 {.name = "ListObjects", .bits = kObjList, .handler = s3::ListObjects, .op = Op::kList}},
               .response_type = "application/xml", .response_schema = "S3Xml"});
  t.push_back({.method = M::kHead, .path = "/s3/{bucket}", .area = "s3", .summary = "S3 HeadBucket", .bits = kBckHead,
               .on_bucket = true, .headers = {s3_auth, s3_sec}, .s3_operations = {{.name = "HeadBucket", .bits = kBckHead, .handler = s3::HeadBucket}}});
  t.push_back({.method = M::kPut, .path = "/s3/{bucket}", .area = "s3", .summary = "S3 CreateBucket, PutBucketVersioning",
               .bits = kCreateBucket, .on_bucket = true, .query = {{"versioning", "string", "PutBucketVersioning"}},
               .headers = {s3_auth, s3_sec},
               .s3_operations = {{.name = "PutBucketVersioning", .selector = {.query = "versioning"}, .bits = kPatch,
                                  .handler = s3::PutBucketVersioning},
                                 {.name = "CreateBucket", .bits = kCreateBucket, .handler = s3::CreateBucket,
                                  .creates_bucket = true}},
               .request_type = "application/xml"});
  t.push_back({.method = M::kDelete, .path = "/s3/{bucket}", .area = "s3", .summary = "S3 DeleteBucket",
               .bits = kDestroyBucket, .on_bucket = true, .headers = {s3_auth, s3_sec},
               .s3_operations = {{.name = "DeleteObjects", .selector = {.query = "delete"}, .bits = kObjDelete,
                                  .handler = s3::DeleteObjects},
                                 {.name = "DeleteBucket", .bits = kDestroyBucket, .handler = s3::DeleteBucket}},
               .ok_status = 204});
  t.push_back({.method = M::kPost, .path = "/s3/{bucket}", .area = "s3", .summary = "S3 DeleteObjects (?delete)",
               .bits = kObjDelete, .on_bucket = true, .query = {{"delete", "string", "DeleteObjects", true}},
               .headers = {s3_auth, s3_sec, {"Content-MD5", "string", "MD5 of the body"}},
               .s3_operations = {{.name = "DeleteObjects", .selector = {.query = "delete"}, .bits = kObjDelete,
                                  .handler = s3::DeleteObjects}},
               .s3_unmatched = "POST on a bucket: expecting ?delete", .request_type = "application/xml",
               .response_type = "application/xml", .response_schema = "S3Xml"});
  const Param upload_id{"uploadId", "string", "multipart upload ID"};
  const Param part_number{"partNumber", "integer", "part number"};
  t.push_back({.method = M::kGet, .path = "/s3/{bucket}/{key}", .area = "s3", .summary = "S3 GetObject, ListParts",
               .bits = kGet, .on_bucket = true, .query = {upload_id, part_number, kS3Token},
               .headers = {s3_auth, s3_sec, {"Range", "string", "bytes=a-b"}, {"If-Match", "string", "ETag"},
                           {"If-None-Match", "string", "ETag"}, {"x-amz-checksum-mode", "string", "ENABLED"}},
               .s3_operations = {{.name = "ListParts", .selector = {.query = "uploadId"}, .bits = kObjList,
                                  .handler = s3::ListParts},
                                 {.name = "GetObject", .bits = kGet, .handler = s3::GetObject, .op = Op::kGet}},
               .response_type = "application/octet-stream",
               .response_headers = {{"ETag", "string", "entity tag"}, {"Last-Modified", "string", "RFC 1123 time"}}});
  t.push_back({.method = M::kHead, .path = "/s3/{bucket}/{key}", .area = "s3", .summary = "S3 HeadObject",
               .bits = kObjHead, .on_bucket = true, .query = {part_number, kS3Token},
               .headers = {s3_auth, s3_sec, {"If-Match", "string", "ETag"}, {"If-None-Match", "string", "ETag"}},
               .s3_operations = {{.name = "HeadObject", .bits = kObjHead, .handler = s3::HeadObject, .op = Op::kHead}},
               .response_headers = {{"ETag", "string", "entity tag"}, {"Content-Length", "integer", "size"}}});
  t.push_back({.method = M::kPut, .path = "/s3/{bucket}/{key}", .area = "s3",
               .summary = "S3 PutObject, CopyObject, UploadPart, UploadPartCopy", .bits = kPut, .on_bucket = true,
               .query = {upload_id, part_number, kS3Token},
               .headers = {s3_auth, s3_sec, {"x-amz-copy-source", "string", "copy: /bucket/key"},
                           {"x-amz-copy-source-range", "string", "UploadPartCopy: bytes=a-b"},
                           {"x-amz-metadata-directive", "string", "COPY or REPLACE"},
                           {"x-amz-content-sha256", "string", "payload hash or STREAMING-* (aws-chunked)"},
                           {"x-amz-decoded-content-length", "integer", "aws-chunked: the payload's length"},
                           {"x-amz-trailer", "string", "aws-chunked trailer checksum"},
                           {"x-amz-sdk-checksum-algorithm", "string", "CRC32, CRC32C, SHA1, SHA256"},
                           {"Content-MD5", "string", "MD5 of the body"},
                           {"Content-Encoding", "string", "aws-chunked"}},
               .s3_operations = {{.name = "UploadPartCopy",
                                  .selector = {.query = "uploadId", .or_query = "partNumber", .header = "x-amz-copy-source"},
                                  .bits = kPut, .handler = s3::UploadPartCopy},
                                 {.name = "UploadPart", .selector = {.query = "uploadId", .or_query = "partNumber"},
                                  .bits = kPut, .handler = s3::UploadPart, .op = Op::kPut},
                                 {.name = "CopyObject", .selector = {.header = "x-amz-copy-source"}, .bits = kPut,
                                  .handler = s3::CopyObject, .op = Op::kPut},
                                 {.name = "PutObject", .bits = kPut, .handler = s3::PutObject, .op = Op::kPut}},
               .request_type = "application/octet-stream",
               .response_headers = {{"ETag", "string", "entity tag"}}});
  t.push_back({.method = M::kPost, .path = "/s3/{bucket}/{key}", .area = "s3",
               .summary = "S3 CreateMultipartUpload (?uploads), CompleteMultipartUpload (?uploadId)", .bits = kPut,
               .on_bucket = true, .query = {{"uploads", "string", "CreateMultipartUpload"}, upload_id},
               .headers = {s3_auth, s3_sec},
               .s3_operations = {{.name = "CreateMultipartUpload", .selector = {.query = "uploads"}, .bits = kPut,
                                  .handler = s3::CreateMultipartUpload},
                                 {.name = "CompleteMultipartUpload", .selector = {.query = "uploadId"}, .bits = kPut,
                                  .handler = s3::CompleteMultipartUpload}},
               .s3_unmatched = "POST on an object: expecting ?uploads or ?uploadId",
               .request_type = "application/xml", .response_type = "application/xml", .response_schema = "S3Xml"});
  t.push_back({.method = M::kDelete, .path = "/s3/{bucket}/{key}", .area = "s3",
               .summary = "S3 DeleteObject, AbortMultipartUpload (?uploadId)", .bits = kObjDelete, .on_bucket = true,
               .query = {upload_id}, .headers = {s3_auth, s3_sec},
               .s3_operations = {{.name = "AbortMultipartUpload", .selector = {.query = "uploadId"}, .bits = kPut,
                                  .handler = s3::AbortMultipartUpload},
                                 {.name = "DeleteObject", .bits = kObjDelete, .handler = s3::DeleteObject, .op = Op::kDelete}},
               .ok_status = 204});
  return t;
}

// A template's shape after "/v1/<area>": the second segment (absent, a literal or a parameter)
// and whether a third (a parameter taking the rest) follows.
struct Shape {
  bool seg2 = false;
  std::string_view seg2_literal;  // empty: a parameter
  bool seg3 = false;
  std::string_view seg3_literal;  // empty: a parameter (taking the rest)
};

Shape ShapeOf(std::string_view path) {
  Shape s;
  if (!path.starts_with("/v1/")) return s;
  std::string_view rest = path.substr(4);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return s;
  rest = rest.substr(slash + 1);
  s.seg2 = true;
  auto s2 = rest.find('/');
  std::string_view seg2 = rest.substr(0, s2);
  if (!seg2.starts_with('{')) s.seg2_literal = seg2;
  s.seg3 = s2 != std::string_view::npos;
  if (s.seg3 && !rest.substr(s2 + 1).starts_with('{')) s.seg3_literal = rest.substr(s2 + 1);
  return s;
}

struct Table {
  std::vector<RouteSpec> rows = Build();
  std::vector<Shape> shapes;
  Table() {
    for (const auto& r : rows) shapes.push_back(ShapeOf(r.path));
  }
};

const Table& TheTable() {
  static const Table t;
  return t;
}

}  // namespace

const std::vector<RouteSpec>& RouteTable() { return TheTable().rows; }

const RouteSpec* FindRoute(Method method, const Route& route) {
  const Table& t = TheTable();
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const RouteSpec& r = t.rows[i];
    if (r.method != method || r.area != route.area || r.area.empty() || r.area == "s3") continue;
    const Shape& s = t.shapes[i];
    if (s.seg2 != !route.bucket.empty()) continue;
    if (s.seg2 && !s.seg2_literal.empty() && s.seg2_literal != route.bucket) continue;
    if (s.seg3 != !route.object.empty()) continue;
    if (s.seg3 && !s.seg3_literal.empty() && s.seg3_literal != route.object) continue;
    return &r;
  }
  return nullptr;
}

const RouteSpec* FindS3Route(Method method, bool has_bucket, bool has_key) {
  const std::string_view path = !has_bucket ? "/s3" : !has_key ? "/s3/{bucket}" : "/s3/{bucket}/{key}";
  for (const RouteSpec& r : TheTable().rows) {
    if (r.area == "s3" && r.method == method && r.path == path) return &r;
  }
  return nullptr;
}

const s3::Operation* FindS3Operation(const RouteSpec& spec, const Exchange& ex) {
  for (const s3::Operation& op : spec.s3_operations) {
    if (op.selector.Matches(ex)) return &op;
  }
  return nullptr;
}

const Action* FindAction(const RouteSpec& spec, std::string_view name) {
  for (const Action& a : spec.actions) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const WhatValue* FindWhat(const RouteSpec& spec, std::string_view name) {
  for (const WhatValue& w : spec.what) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

std::string UnknownWhatMessage(const RouteSpec& spec, std::string_view what) {
  std::string out(spec.unknown_what);
  const size_t at = out.find("{}");
  if (at != std::string::npos) out.replace(at, 2, what.substr(0, 64));
  return out;
}

AccessAttrs ActionBits(const RouteSpec& spec, std::string_view action) {
  for (const Action& a : spec.actions) {
    if (a.name == action) return a.bits;
  }
  return spec.unknown_action_bits;
}

}  // namespace ais::router
