// This node's own face (handlers/node_actions.cc): starting jobs by kind, its performance
// counters and its log, as a real AIS node serves them under /v1/daemon (and the proxy under
// /v1/reverse/daemon with an Ais-Node-Id header).
#pragma once

#include "handlers/context.h"

namespace ais {

// PUT /v1/cluster {"action":"start","value":{"kind"|"Kind",...,"bck"|"Bck","buckets"|"Buckets"}}.
Task<Handled> StartJobByKind(ServerContext& ctx, Exchange& ex, const ActionMsg& msg);
// GET ?what=node_status: the node's status and stats (AIS stats.NodeStatus shape).
Task<Handled> NodeStatus(ServerContext& ctx, Exchange& ex);
// GET ?what=log[&severity=info|warning|error][&all=true]: the log as text, or (all) as .tar.gz.
Task<Handled> NodeLog(ServerContext& ctx, Exchange& ex);
// /v1/reverse/daemon: the request is for the node named in Ais-Node-Id (this one, or 404).
Task<Handled> HandleReverse(ServerContext& ctx, Exchange& ex, const Route& route);

}  // namespace ais
