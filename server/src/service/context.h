// What every handler (AIS API and S3 alike) may use: the store, the job registry, the inventory catalog, GetBatch's
// shared state and this node's identity. Owned by main; outlives every request.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "api/ais_messages.h"
#include "api/route.h"
#include "http/exchange.h"
#include "http/tls.h"
#include "inventory/inventory_catalog.h"
#include "jobs/job_registry.h"
#include "store/store.h"

namespace ais {

class BatchService;  // handlers/batch_stream.h
class CacheTier;     // remote/cache_tier.h
class Downloader;    // download/downloader.h
class AccessLog;     // metrics/access_log.h
class Resilver;      // jobs/resilver.h
namespace auth {
class Authorizer;  // auth/authorizer.h
}
namespace etl {
class EtlManager;  // etl/etl_manager.h
}

struct ServerContext {
  Store& store;
  JobRegistry& jobs;
  InventoryCatalog& inventory;
  BatchService& batch;
  CacheTier& remote;  // remote (s3://) buckets
  NodeInfo node;
  std::string cluster_uuid;
  int64_t start_ns = 0;
  std::string promote_root{};  // the only tree promote may read ("" = none: promote is off)
  uint64_t max_page_size = 10000;  // list-objects entries per page (AIS MaxPageSizeAIS); larger asks are clamped
  // Cluster feature bits (api/features.h): --s3-api-via-root at startup, set-config at run time.
  std::atomic<uint64_t> features{0};
  std::function<uint64_t()> open_connections = nullptr;  // the HTTP server's count (GET /metrics)
  auth::Authorizer* auth = nullptr;  // access control (service/access.h); null: none (tests)
  AccessLog* access_log = nullptr;   // --access-log (metrics/access_log.h); null: off
  etl::EtlManager* etl = nullptr;    // the ETLs (transformers as local processes); set by main
  Downloader* download = nullptr;    // download jobs (/v1/download); set by main
  Resilver* resilver = nullptr;      // the resilver after mountpath changes; set by main
  TlsOptions tls;  // HTTPS: the files, shown in the cluster config's net.http
  // S3 access key id -> secret (--s3-credentials): set, S3 requests need a valid SigV4
  // signature by one of them (s3/sigv4.h) or, with tokens required, a token.
  std::map<std::string, std::string, std::less<>> s3_access_keys{};
};

// Reads a JSON body within the limits (DefaultJsonLimits: size, depth); an empty body is {}.
Task<Result<nlohmann::json>> ReadJsonBody(Exchange& ex);
// The request's `namespace` query (store/names.h ParseNamespace): a malformed one is a 400.
Result<BucketNs> NamespaceOf(const Exchange& ex);

}  // namespace ais
