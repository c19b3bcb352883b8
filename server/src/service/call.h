// A handler's contract with the router (router/router.h): what the route table's row made of the
// request before the handler runs, and the handler's signature.
#pragma once

#include <string>

#include "api/ais_messages.h"
#include "api/route.h"
#include "http/exchange.h"

namespace ais {

struct ServerContext;

// This node's two faces: the one process is a one-proxy, one-target cluster (handlers/node_actions.h).
enum class NodeRole { kProxy, kTarget };

// By the time a handler runs, its request passed the access check of its row (and of its action),
// and its action message, if the row takes one, has been read and decoded.
struct ApiCall {
  const Route& route;
  // The path's bucket as a store key (store/bck.h): resolved for rows that name a bucket
  // (ResolveBucket: validated, a remote one added on first use) unless the action says not to;
  // empty for rows that name none.
  std::string bucket;
  const ActionMsg& msg;  // the decoded action message; an empty one for rows without actions
  NodeRole role = NodeRole::kTarget;  // the node face asked (/v1/reverse: by Ais-Node-Id)
};

// Replies (returns Replied) or returns the error Status the router replies with.
// REQUIRES: `call` outlives the task (the router awaits it).
using Handler = Task<Handled> (*)(ServerContext& ctx, Exchange& ex, const ApiCall& call);

}  // namespace ais
