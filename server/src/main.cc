// aistore-server: a one-node AIStore-compatible storage server. Its flags are the table in
// server_flags.cc; this file is the wiring: parse, build the server, run.
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "api/features.h"
#include "download/downloader.h"
#include "auth/authorizer.h"
#include "auth/oidc.h"
#include "etl/etl_manager.h"
#include "handlers/batch_stream.h"
#include "http/server.h"
#include "http/tls.h"
#include "inventory/inventory_catalog.h"
#include "jobs/job_registry.h"
#include "jobs/resilver.h"
#include "jobs/space_monitor.h"
#include "metrics/access_log.h"
#include "metrics/metrics.h"
#include "remote/cache_tier.h"
#include "router/openapi.h"
#include "router/router.h"
#include "s3/sigv4.h"
#include "server_flags.h"
#include "service/context.h"
#include "store/store.h"
#include "util/json_fields.h"
#include "util/log_ring.h"

namespace {

constexpr const char* kVersion = "aistore-server 0.1.0 (AIS API v1)\n";

// GetBatch and PUT buffers of 256 KiB-4 MiB come and go per request. With glibc's defaults they
// are mmapped or trimmed back to the kernel on free, so each reuse page-faults fresh zeroed
// pages. Keep freed memory for reuse.
void TuneAllocator() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);  // a GetBatch window (~32 MiB) and then some
}

void RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// Says why on stderr; returns `exit_code`.
int Fail(int exit_code, const std::string& why) {
  std::cerr << "aistore-server: " << why << "\n";
  return exit_code;
}

void Warn(const std::string& warning) {
  std::cerr << "aistore-server: " << warning << std::endl;
  ais::LogWarning(warning);
}

// The access check. Its key, as AIS reads it at start: an RSA public key over an HMAC secret
// over the OIDC issuers (whose keys are fetched).
ais::Result<std::unique_ptr<ais::auth::Authorizer>> MakeAuthorizer(ais::auth::AuthConfig cfg) {
  if (const char* pub = std::getenv("AIS_AUTHN_PUBLIC_KEY"); pub && *pub) {
    cfg.signature_method = "RS256";
    cfg.signature_key = pub;
  } else if (const char* secret = std::getenv("AIS_AUTHN_SECRET_KEY"); secret && *secret) {
    cfg.signature_method = "HS256";
    cfg.signature_key = secret;
  }
  if (!cfg.oidc_issuers.empty() && !cfg.signature_key.empty()) {
    // One way to verify tokens: an issuer given next to a key would otherwise be ignored.
    return ais::Status::InvalidArgument(
        "--auth-oidc-issuer and AIS_AUTHN_PUBLIC_KEY/AIS_AUTHN_SECRET_KEY both given: tokens are verified "
        "either with the key or by the issuers (unset the key to trust the issuers, or drop --auth-oidc-issuer)");
  }
  std::unique_ptr<ais::auth::KeyProvider> oidc;
  if (!cfg.oidc_issuers.empty()) {
    auto made = ais::auth::OidcKeyProvider::Make(cfg);
    if (!made.ok()) return made.status();
    oidc = std::move(*made);
  }
  return ais::auth::Authorizer::Make(std::move(cfg), std::move(oidc));
}

bool IsLoopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

// The line tests and scripts wait for, and the warnings about what the flags leave open.
void Announce(const ais::ServerOptions& opts, const ais::ServerContext& ctx, uint16_t port, bool auth_required) {
  const std::string& host = opts.http.host;
  const std::string shown = host == "0.0.0.0" ? "127.0.0.1" : host;
  const std::string scheme = opts.tls.enabled() ? "https://" : "http://";
  if (opts.tls.enabled()) {
    const std::string data_path = ais::TlsDataPathDescription();
    std::cout << "aistore-server: " << data_path << std::endl;
    ais::LogInfo(data_path);
  }
  std::cout << "aistore-server: listening on " << scheme << shown << ":" << port << std::endl;
  ais::LogInfo("node " + ctx.node.node_id + " listening on " + scheme + shown + ":" + std::to_string(port) + ", " +
               std::to_string(opts.store.mountpaths.size()) + " mountpath(s), cluster " + ctx.cluster_uuid);
  if (!IsLoopback(host) && !auth_required) {
    Warn("WARNING: listening on " + host +
         " without access control: anyone who can reach this port can read, overwrite and "
         "delete every object (see --auth-required, or bind --host 127.0.0.1)");
  }
  if (!opts.auth.oidc_issuers.empty() && opts.auth.audiences.empty()) {
    Warn("WARNING: trusting OIDC issuers without --auth-audience: a token the issuer made for any other "
         "application (any audience) is accepted here");
  }
}

// Builds the server the options describe and runs it until SIGINT/SIGTERM. Returns the exit
// status: 0 stopped cleanly, 1 could not start (the store, TLS, the port), 2 a setting refused.
int Serve(ais::ServerOptions& opts) {
  auto authorizer = MakeAuthorizer(opts.auth);
  if (!authorizer.ok()) return Fail(2, authorizer.status().message());
  if (opts.tls.enabled()) {
    auto tls_ctx = ais::MakeServerTlsContext(opts.tls);
    if (!tls_ctx.ok()) return Fail(1, tls_ctx.status().message());
    opts.http.tls = *tls_ctx;
  }
  ais::DefaultJsonLimits() = opts.json;
  RaiseFdLimit();
  // sendfile(2) to a peer that hung up raises SIGPIPE (it has no MSG_NOSIGNAL): get EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  auto store = ais::Store::Open(opts.store);
  if (!store.ok()) return Fail(1, store.status().message());
  ais::JobRegistry jobs{opts.job_idle};
  ais::InventoryCatalog inventory(**store, jobs);
  ais::BatchService batch(opts.batch, jobs);
  ais::CacheTier remote(**store, opts.remote);
  // The attached remote AIS clusters (the config's backend.ais), kept beside the ETL state.
  if (ais::Status st = remote.ais_clusters().Load(opts.store.mountpaths.front() + "/.ais.remote_clusters.json"); !st.ok()) {
    return Fail(1, st.message());
  }
  ais::SpaceMonitor space_monitor(**store, jobs);  // the lru job when a filesystem fills up
  ais::Resilver resilver(**store, jobs);  // after mountpath changes (and one left pending at the last stop)
  opts.etl.dir = opts.store.mountpaths.front() + "/.ais.etl";
  ais::etl::EtlManager etl(opts.etl);
  const std::string& id = (*store)->daemon_id();
  ais::ServerContext ctx{.store = **store,
                         .jobs = jobs,
                         .inventory = inventory,
                         .batch = batch,
                         .remote = remote,
                         .node = {.node_id = "t[" + id + "]", .daemon_id = id},
                         .cluster_uuid = (*store)->cluster_uuid(),
                         .start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count(),
                         .tls = opts.tls};
  ctx.promote_root = opts.promote_root;
  ctx.auth = authorizer->get();
  ctx.etl = &etl;
  ctx.resilver = &resilver;
  ctx.max_page_size = opts.max_page_size;
  // Declared after ctx (its feature bits) and before the server: destroyed, its jobs aborted and
  // joined, once no request can reach it.
  ais::Downloader downloads(**store, jobs, remote,
                            {.allow_loopback = opts.download_allow_loopback,
                             .allow_private =
                                 [&ctx] { return (ctx.features.load() & ais::kFeatDloadAllowPrivateEgress) != 0; },
                             .etl = &etl});
  ctx.download = &downloads;
  if (opts.s3_via_root) ctx.features.store(ais::kFeatS3ApiViaRoot);
  if (!opts.s3_credentials.empty()) {
    auto keys = ais::s3::LoadAccessKeys(opts.s3_credentials);
    if (!keys.ok()) return Fail(2, keys.status().message());
    ctx.s3_access_keys = std::move(*keys);
  }
  ais::ServerLog().set_level(opts.log_level);
  // Declared before the server: destroyed after it, once no request can record an entry.
  std::unique_ptr<ais::AccessLog> access_log;
  if (!opts.access_log.empty()) {
    auto opened = ais::AccessLog::Open(opts.access_log);
    if (!opened.ok()) return Fail(2, opened.status().message());
    access_log = std::move(*opened);
    ctx.access_log = access_log.get();
  }
  ais::HttpServer server(opts.http, ctx.node, [&ctx](ais::Exchange& ex) { return ais::Dispatch(ctx, ex); });
  ctx.open_connections = [&server] { return static_cast<uint64_t>(server.open_connections()); };
  ais::ServerMetrics().set_enabled(opts.metrics_on);
  auto port = server.Bind();
  if (!port.ok()) return Fail(1, port.status().message());
  Announce(opts, ctx, *port, (*authorizer)->required());
  // Transformers reach this node on loopback when it listens there too.
  const std::string& host = opts.http.host;
  const std::string reach = (host == "0.0.0.0" || host == "::") ? "127.0.0.1" : host;
  etl.Configure((opts.tls.enabled() ? "https://" : "http://") + reach + ":" + std::to_string(*port),
                (*authorizer)->required(), IsLoopback(host));
  if (ais::Status st = etl.Restore(); !st.ok()) Warn("ETLs of the last run not restored: " + st.message());
  server.Run(/*handle_signals=*/true);
  // Work offloaded to worker threads posts its result back to the server's I/O contexts: it
  // ends before `server` (and the contexts) go. A key fetch in flight is cut short first.
  (*authorizer)->Shutdown();
  downloads.Shutdown();  // before the ETLs, the cache tier's pool and the header snapshots: jobs use them
  etl.Shutdown();  // no transformer outlives the server
  remote.pool().Shutdown();
  batch.Shutdown();  // batch threads use the store: stop them before it goes
  if (ais::Status st = (*store)->SaveHeaderSnapshots(); !st.ok()) {
    ais::LogWarning("saving the object headers for the next start: " + st.message());
  }
  std::cout << "aistore-server: stopped" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  TuneAllocator();
  ais::ServerOptions opts;
  auto command = ais::ParseFlags(argc, argv, &opts);
  if (!command.ok()) return Fail(2, command.status().message());
  switch (*command) {
    case ais::Command::kServe: return Serve(opts);
    case ais::Command::kHelp: std::cout << ais::Usage(); return 0;
    case ais::Command::kVersion: std::cout << kVersion; return 0;
    case ais::Command::kPrintOpenApi: std::cout << ais::router::OpenApiYaml(); return 0;
    case ais::Command::kPrintFlagsMarkdown: std::cout << ais::FlagsMarkdown(); return 0;
  }
  return 2;
}
