// The dispatcher: the layer above the AIS API's handlers (handlers/) and the S3 front end (s3/).
// Every request comes here from the HTTP server: an S3 path goes to the S3 front end; a /v1 path
// is looked up in the route table (router/routes.h), checked with its row's permission bits,
// its action message read and its bucket resolved, and its row's handler called. The one error
// reply of the AIS API is made here, as are each request's metrics and access-log line.
#pragma once

#include "http/exchange.h"
#include "service/context.h"

namespace ais {

// Routes one exchange, and replies with the error of a handler that returned one.
Task<void> Dispatch(ServerContext& ctx, Exchange& ex);

}  // namespace ais
