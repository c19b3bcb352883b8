// The AIS API's handlers (/v1): every function the route table (router/routes.cc) names, by
// area. Each is a Handler (service/call.h): its request has passed its row's access check, its
// action message (if any) is decoded in `call.msg`, its bucket resolved in `call.bucket`.
// Which bucket kinds each serves, and which action or `what=` value it answers, is the table's.
#pragma once

#include <nlohmann/json.hpp>

#include "service/call.h"
#include "util/status.h"

namespace ais {

struct ServerContext;

// ---- health, tokens (cluster.cc, tokens.cc) --------------------------------------------------
Task<Handled> GetHealth(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// POST /v1/tokens: does this cluster accept the caller's token (or AuthN's signing key)?
Task<Handled> ValidateToken(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> RevokeTokens(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- cluster and node actions (cluster.cc, node_actions.cc) ---------------------------------
Task<Handled> SetConfig(ServerContext& ctx, Exchange& ex, const ApiCall& call);          // action set-config
Task<Handled> SetConfigByQuery(ServerContext& ctx, Exchange& ex, const ApiCall& call);   // PUT /v1/cluster/setconfig
Task<Handled> StartJobByKind(ServerContext& ctx, Exchange& ex, const ApiCall& call);     // action start
Task<Handled> StopJobs(ServerContext& ctx, Exchange& ex, const ApiCall& call);           // action stop
Task<Handled> EnableMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DisableMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> AttachMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DetachMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- queries: GET /v1/cluster?what=, /v1/daemon?what= (cluster.cc, node_actions.cc) ----------
// Job queries (body: xact.QueryMsg): what=status, status_all, qryxstats, running_all.
Task<Handled> QueryJobStatus(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryJobsStatus(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryJobSnapshots(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryRunningJobs(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QuerySmap(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryBmd(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryLog(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryNodeStatus(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// cluster only
Task<Handled> QueryClusterConfig(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryBackends(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryRemoteClusters(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> AttachRemoteCluster(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DetachRemoteCluster(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryClusterMountpaths(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryTargetIps(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryClusterNodeStats(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryClusterSysinfo(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// node only (call.role: the face asked)
Task<Handled> QueryNodeConfig(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QuerySnode(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryNodeStats(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryMetricNames(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QuerySysinfo(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QuerySoftwareVersion(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryTlsCertificate(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// target face only
Task<Handled> QueryNodeMountpaths(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryDisks(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> QueryNodeRemote(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// /v1/sort: the (empty) job list of a feature this server does not have.
Task<Handled> ListSortJobs(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- download jobs (downloads.cc) --------------------------------------------------------------
// POST /v1/download: start a job (body: dload.Body); GET: list or one job's status
// (dload.AdminBody); DELETE /v1/download/abort, /v1/download/remove.
Task<Handled> StartDownload(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> GetDownloads(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> AbortDownload(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> RemoveDownload(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- buckets (buckets.cc, bucket_actions.cc) --------------------------------------------------
Task<Handled> ListBuckets(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> ListObjects(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// HEAD /v1/buckets/<bucket>[/<prefix>]: props, and with ?bsumm_remote= the summary ("info").
Task<Handled> HeadBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// summary-bck {"value": BsummCtrlMsg}: 202 + job ID to start, then 202 while running and 200 +
// [BsummResult] when done; of call.bucket, or of every bucket when the row names none.
Task<Handled> GetBucketSummary(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// show-inventory: NBIInfo by inventory object name, of call.bucket, or of every bucket (of the
// provider the query names) when the row names none.
Task<Handled> ShowInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> CreateBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> CreateRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> MoveRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);  // refused, as AIS
// copy-bck, move-bck to ?bck_to=<uname>.
Task<Handled> StartCopyOrMoveBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// delete-listrange, evict-listrange, prefetch-listrange, copy-listrange, archive.
Task<Handled> StartListRange(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> StartRechunk(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> MakeNCopies(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> CreateInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DestroyInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> EvictRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DestroyBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DestroyRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);  // refused, as AIS
Task<Handled> SetBucketProps(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> ResetBucketProps(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- objects (objects.cc, bucket_actions.cc) -----------------------------------------------
Task<Handled> GetObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> GetRemoteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> HeadObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// PUT: a write, or by query an append (append_type), a copy (object_to), a multipart part
// (uploadId), a file added to a shard (archpath).
Task<Handled> PutObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DeleteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DeleteRemoteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> RenameObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> StartMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> CompleteMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> AbortMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> CheckObjectLock(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> SetObjectCustomProps(ServerContext& ctx, Exchange& ex, const ApiCall& call);
// promote {"name": <src>, "value": PromoteArgs}: a file or directory under --promote-root.
Task<Handled> Promote(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> StartBlobDownload(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- ETL (etl.cc): /v1/etl, spec etl.md §2 ---------------------------------------------------
// etl-bck (value: TCBMsg with "id"), as copy-bck through the ETL; etl-listrange is StartListRange's.
Task<Handled> StartTransformBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> ListEtls(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> InitEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> ShowEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call);  // details: init_msg, obj_errors
Task<Handled> StartEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> StopEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> DeleteEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> EtlLogs(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> EtlHealth(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> EtlMetrics(ServerContext& ctx, Exchange& ex, const ApiCall& call);
Task<Handled> EtlOther(ServerContext& ctx, Exchange& ex, const ApiCall& call);  // logs/<target>, else 400
// /v1/etl/_object/<etl>/<secret>/<uname>: a transformer reads an object (hpull); the secret is the check.
Task<Handled> EtlObject(ServerContext& ctx, Exchange& ex, const ApiCall& call);

// ---- GetBatch (batch.cc) -------------------------------------------------------------------
Task<Handled> GetBatch(ServerContext& ctx, Exchange& ex, const ApiCall& call);

}  // namespace ais
