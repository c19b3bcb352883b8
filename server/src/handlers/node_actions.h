// This node's own faces (handlers/node_actions.cc). The one process is a one-proxy, one-target
// cluster: the cluster map lists a proxy and a target with distinct ids (the official CLI looks
// nodes up by id, target map first), and /v1/reverse/daemon with an Ais-Node-Id header reaches
// either face. Served here: starting jobs by kind, the node queries of GET /v1/daemon?what=...
// (status and stats, config, BMD, disks, metric names, sysinfo, log) and the cluster-wide ones
// built from them (cluster config, backends, remote clusters), in the JSON shapes AIS's CLI
// and SDK decode (Go types: int64 as numbers, ",string" fields as strings).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "remote/ais_cluster.h"
#include "service/call.h"
#include "service/context.h"

namespace ais {

// AIS cos.NodeStateFlags of a healthy node: ClusterStarted | NodeStarted.
inline constexpr int64_t kNodeStateHealthy = 6;

// 200 with `out` as the JSON body. (Text already JSON would become a JSON string: refused.)
Task<Handled> ReplyJson(Exchange& ex, const nlohmann::json& out);
// GET /v1/cluster?what=remote (meta.RemAisVec): every attached remote AIS cluster, probed now
// (blocks: off the I/O threads).
nlohmann::json RemoteClustersJson(AisClusters& clusters);
Task<Handled> ReplyJson(Exchange& ex, const std::string& text) = delete;

// The proxy face's daemon id (the target's is ctx.node.daemon_id).
std::string ProxyId(const ServerContext& ctx);

// GET /v1/daemon?what=smap: the cluster map, both faces at the URL the request came to.
nlohmann::json SmapJson(const ServerContext& ctx, const Exchange& ex);
// GET /v1/cluster?what=cluster_config: AIS ClusterConfig (its 34 top-level sections).
nlohmann::json ClusterConfigJson(const ServerContext& ctx, const Exchange& ex);
// GET /v1/cluster?what=node_stats and what=sysinfo: each face's answer to the daemon query,
// gathered as AIS's proxy does ({"proxy": ..., "target": {id: ...}}; sysinfo leaves out the
// answering proxy).
nlohmann::json ClusterNodeStatsJson(ServerContext& ctx, const Exchange& ex);
nlohmann::json ClusterSysinfoJson(ServerContext& ctx);
// GET /v1/daemon?what=mountpaths (a target's): {"available", "waiting_dd", "disabled"}.
nlohmann::json MountpathListJson(const Store& store);
// GET /v1/daemon?what=bmd: the bucket metadata, every bucket with its props.
nlohmann::json BmdJson(ServerContext& ctx);

}  // namespace ais
