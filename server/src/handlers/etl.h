// The transforming reads the object handlers hand over to ETL (spec etl.md §4): a GET with
// `etl_name`.
#pragma once

#include <string>

#include "service/call.h"

namespace ais {

struct ServerContext;

// GET of a stored object through ETL `etl_name` (and `etl_pipeline`, `etl_args` from the
// query): the transformer's output, streamed. The object is local by now (a remote one cached).
Task<Handled> GetTransformed(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                             const std::string& etl_name);

// Objects read for a transformer (/v1/etl/_object) are served by the object GET itself.
Task<Handled> ReadObject(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name);

}  // namespace ais
