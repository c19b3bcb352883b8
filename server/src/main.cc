// aistore-server: a one-node AIStore-compatible storage server. Flags and wiring only.
#include <getopt.h>
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "handlers/batch_stream.h"
#include "api/features.h"
#include "auth/authorizer.h"
#include "auth/oidc.h"
#include "service/context.h"
#include "remote/cache_tier.h"
#include "s3/sigv4.h"
#include "http/server.h"
#include "http/tls.h"
#include "router/openapi.h"
#include "router/router.h"
#include "metrics/access_log.h"
#include "metrics/metrics.h"
#include "store/store.h"
#include "util/json_fields.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace {

constexpr const char* kUsage = R"(Usage: aistore-server [OPTIONS]

A single-node storage server speaking the AIStore REST API (/v1/...).

Options:
  --mountpath DIR   a data directory; repeat for several disks (required, at least one)
  --port N          TCP port to listen on (default 8080; 0 picks a free port)
  --host ADDR       address to bind (default 0.0.0.0)
  --threads N       I/O threads (default: two per CPU, at least 4)
  --getbatch-max-soft-errs N
                    GetBatch: missing items (placeholders) a batch may hold before it
                    fails (default 8, as AIS get_batch.max_soft_errs)
  --promote-root DIR
                    the only directory tree "promote" may read files from (none by default:
                    promote is off; AIS uses /var/lib/ais/promote). Files are opened beneath it
                    with no symlink followed; FIFOs and devices are refused
  --allow-s3-endpoint URL
                    an S3 endpoint a bucket's extra.aws.endpoint may name (repeatable); a
                    bucket may name no other (the server's own, S3_ENDPOINT or a profile's
                    endpoint_url, needs no listing). Setting extra.aws.endpoint or
                    extra.aws.profile takes an ADMIN token
  --no-aws-backend  serve no s3:// buckets (AIS cluster config without backend.aws): requests
                    naming one get 404 at once instead of reaching out to S3
  --no-metrics      count nothing per request (GET /metrics still answers, with zeros): only
                    to measure what the counting costs
  --fsync           durability: fdatasync object data and directories before every commit
                    (default off: a crash of the process loses nothing committed, a power
                    loss may lose the last writes)
  --s3-api-via-root the S3 API at the root path too (as cluster feature S3-API-via-Root); it is
                    always at /s3
  --s3-credentials FILE
                    an AWS shared-credentials file (INI): every profile's access key may sign
                    S3 requests, and S3 requests must carry a valid SigV4 signature by one of
                    them (or, with --auth-required, a token). Default: signatures unchecked

TLS (HTTPS only on the port when given; AIS net.http.use_https, server_crt, server_key):
  --tls-cert FILE       PEM certificate chain, the server's certificate first
  --tls-key FILE        PEM private key of that certificate
  --tls-client-ca FILE  PEM CA certificates: clients must present a certificate one of them
                        signed (mutual TLS; AIS net.http.client_ca_tls, client_auth_tls 4)

Access control (off by default; docs/user-guide.md "Access control"):
  --auth-required   require a valid bearer token (JWT) on every request but /v1/health (as
                    cluster config auth.client_auth_required, which set-config changes at run
                    time). Tokens are verified with AIS_AUTHN_PUBLIC_KEY (an RSA public key,
                    PEM) if set, else AIS_AUTHN_SECRET_KEY (an HS256 secret), else the OIDC
                    issuers below
  --auth-oidc-issuer URL
                    trust tokens of this OIDC issuer (https://; repeatable): its signing keys
                    are discovered (/.well-known/openid-configuration, JWKS) and refreshed, so
                    it may rotate them while the server runs
  --auth-oidc-ca FILE
                    CA bundle to verify the issuers' TLS certificates with (default: system CAs)
  --auth-audience AUD
                    accept only tokens whose "aud" holds AUD (repeatable: any of them)

Limits (a request over one gets a 4xx, or 503 + Retry-After, never unbounded memory):
  --max-connections N      open connections (default 8192); more get 503 + Retry-After
  --max-connections-per-address N
                           open connections from one client IP address (default 1024); more
                           get 503 + Retry-After
  --idle-timeout SECONDS   a kept-alive connection may wait this long for its next request
                           (default 300)
  --header-timeout SECONDS a request's header must arrive within this long of its first
                           byte, and a new connection's first request within this long of
                           its accept (default 30)
  --max-header-size SIZE   request header section, e.g. 64KiB (default); larger gets 431
  --max-json-body SIZE     JSON request body, e.g. 4MiB (default); larger gets 400
  --max-json-depth N       nesting of a JSON request body (default 32)
  --getbatch-max-items N   items in one GetBatch request (default 100000)
  --list-max-page-size N   entries in one list-objects page (default 10000, as AIS); larger
                           asks are clamped
  --job-idle-timeout MS    how long a job that idles (get-batch, copy-objects) stays listed as
                           running and idle after its last work before it ends (default 60000,
                           AIS xact.IdleDefault)
  --access-log FILE one JSON line per request (time, method, path, status, bytes,
                    duration_us, remote) appended to FILE, or "-" for stderr; off by
                    default. Written by its own thread; entries past a queue of 16384
                    are dropped and counted (GET /metrics: access_log_dropped_count)
  --log-level LEVEL the server log (GET /v1/daemon?what=log) keeps lines of this
                    severity and above: info (default), warning or error; also at run
                    time: PUT /v1/cluster/setconfig?log.level=LEVEL
  --print-openapi   print the OpenAPI document of the REST API (YAML) and exit
  --help            show this help and exit
  --version         print the version and exit

On start it prints one line "aistore-server: listening on http://HOST:PORT" (https:// with
TLS) to stdout.
SIGINT/SIGTERM stop it cleanly.
)";

void RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace

// GetBatch and PUT buffers of 256 KiB-4 MiB come and go per request. With glibc's defaults they
// are mmapped or trimmed back to the kernel on free, so each reuse page-faults fresh zeroed
// pages. Keep freed memory for reuse.
static void TuneAllocator() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);  // a GetBatch window (~32 MiB) and then some
}

int main(int argc, char** argv) {
  TuneAllocator();
  ais::StoreOptions store_opts;
  ais::HttpServerOptions http_opts;
  ais::BatchConfig batch_cfg;
  std::string promote_root;  // "" = promote off
  ais::JsonLimits& json_limits = ais::DefaultJsonLimits();
  uint64_t max_page_size = 10000;
  bool s3_via_root = false;
  std::string s3_credentials;
  bool metrics_on = true;
  std::string access_log_path;  // "" = off
  ais::LogSeverity log_level = ais::LogSeverity::kInfo;
  uint64_t job_idle_ms = static_cast<uint64_t>(ais::JobRegistry::kDefaultIdleTimeout.count());
  ais::CacheTierOptions remote_opts;
  ais::auth::AuthConfig auth_cfg;
  ais::TlsOptions tls_opts;
  // A numeric flag in [lo, hi] (sizes may be IEC: "64KiB"); false after printing why not.
  auto number = [](const char* flag, uint64_t lo, uint64_t hi, bool iec, auto* out) {
    auto n = iec ? ais::ParseIecSize(optarg) : ais::ParseUint(optarg);
    if (!n || *n < lo || *n > hi) {
      std::cerr << "aistore-server: invalid --" << flag << " " << optarg << " (expecting " << lo << ".." << hi
                << ")\n";
      return false;
    }
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(*n);
    return true;
  };
  static option long_opts[] = {{"mountpath", required_argument, nullptr, 'm'},
                               {"port", required_argument, nullptr, 'p'},
                               {"host", required_argument, nullptr, 'H'},
                               {"threads", required_argument, nullptr, 't'},
                               {"fsync", no_argument, nullptr, 'f'},
                               {"getbatch-max-soft-errs", required_argument, nullptr, 's'},
                               {"promote-root", required_argument, nullptr, 'P'},
                               {"max-connections", required_argument, nullptr, 1000},
                               {"idle-timeout", required_argument, nullptr, 1001},
                               {"max-connections-per-address", required_argument, nullptr, 1011},
                               {"header-timeout", required_argument, nullptr, 1002},
                               {"max-header-size", required_argument, nullptr, 1003},
                               {"max-json-body", required_argument, nullptr, 1004},
                               {"max-json-depth", required_argument, nullptr, 1005},
                               {"getbatch-max-items", required_argument, nullptr, 1006},
                               {"list-max-page-size", required_argument, nullptr, 1007},
                               {"job-idle-timeout", required_argument, nullptr, 1008},
                               {"no-metrics", no_argument, nullptr, 1021},
                               {"no-aws-backend", no_argument, nullptr, 1020},
                               {"allow-s3-endpoint", required_argument, nullptr, 1022},
                               {"s3-api-via-root", no_argument, nullptr, 1009},
                               {"s3-credentials", required_argument, nullptr, 1010},
                               {"auth-required", no_argument, nullptr, 1030},
                               {"auth-oidc-issuer", required_argument, nullptr, 1031},
                               {"auth-oidc-ca", required_argument, nullptr, 1032},
                               {"auth-audience", required_argument, nullptr, 1033},
                               {"tls-cert", required_argument, nullptr, 1040},
                               {"tls-key", required_argument, nullptr, 1041},
                               {"tls-client-ca", required_argument, nullptr, 1042},
                               {"print-openapi", no_argument, nullptr, 1050},
                               {"access-log", required_argument, nullptr, 1051},
                               {"log-level", required_argument, nullptr, 1052},
                               {"help", no_argument, nullptr, 'h'},
                               {"version", no_argument, nullptr, 'v'},
                               {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", long_opts, nullptr)) != -1) {
    switch (c) {
      case 'm': store_opts.mountpaths.emplace_back(optarg); break;
      case 'p': {
        auto port = ais::ParseUint(optarg);
        if (!port || *port > 65535) {
          std::cerr << "aistore-server: invalid --port " << optarg << "\n";
          return 2;
        }
        http_opts.port = static_cast<uint16_t>(*port);
        break;
      }
      case 'H': http_opts.host = optarg; break;
      case 't': {
        auto n = ais::ParseUint(optarg);
        if (!n || *n == 0 || *n > 256) {
          std::cerr << "aistore-server: invalid --threads " << optarg << "\n";
          return 2;
        }
        http_opts.threads = static_cast<size_t>(*n);
        break;
      }
      case 'f': store_opts.fsync = true; break;
      case 's': {
        auto n = ais::ParseUint(optarg);
        if (!n || *n > UINT32_MAX) {
          std::cerr << "aistore-server: invalid --getbatch-max-soft-errs " << optarg << "\n";
          return 2;
        }
        batch_cfg.max_soft_errs = static_cast<uint32_t>(*n);
        break;
      }
      case 'P':
        promote_root = optarg;
        while (promote_root.size() > 1 && promote_root.back() == '/') promote_root.pop_back();
        if (!promote_root.empty() && promote_root.front() != '/') {
          std::cerr << "aistore-server: --promote-root must be an absolute path: " << optarg << "\n";
          return 2;
        }
        break;
      case 1000:
        if (!number("max-connections", 1, 1 << 24, false, &http_opts.max_connections)) return 2;
        break;
      case 1011:
        if (!number("max-connections-per-address", 1, 1 << 24, false, &http_opts.max_connections_per_address)) {
          return 2;
        }
        break;
      case 1001: {
        uint64_t secs = 0;
        if (!number("idle-timeout", 1, 86400, false, &secs)) return 2;
        http_opts.idle_timeout = std::chrono::seconds(secs);
        break;
      }
      case 1002: {
        uint64_t secs = 0;
        if (!number("header-timeout", 1, 3600, false, &secs)) return 2;
        http_opts.header_timeout = std::chrono::seconds(secs);
        break;
      }
      case 1003:
        if (!number("max-header-size", 1024, 1 << 30, true, &http_opts.header_limit)) return 2;
        break;
      case 1004:
        if (!number("max-json-body", 1024, 1ULL << 32, true, &json_limits.max_body)) return 2;
        break;
      case 1005:
        if (!number("max-json-depth", 2, 10000, false, &json_limits.max_depth)) return 2;
        break;
      case 1006:
        if (!number("getbatch-max-items", 1, 1ULL << 32, false, &batch_cfg.max_items)) return 2;
        break;
      case 1007:
        if (!number("list-max-page-size", 1, 1 << 24, false, &max_page_size)) return 2;
        break;
      case 1008:
        if (!number("job-idle-timeout", 1, 86400000, false, &job_idle_ms)) return 2;
        break;
      case 1020: remote_opts.aws_enabled = false; break;
      case 1022: {
        const std::string e = ais::NormalizeEndpoint(optarg);
        if (!e.starts_with("http://") && !e.starts_with("https://")) {
          std::cerr << "aistore-server: invalid --allow-s3-endpoint " << optarg << " (expecting http(s)://host[:port])\n";
          return 2;
        }
        remote_opts.allowed_endpoints.push_back(e);
        break;
      }
      case 1009: s3_via_root = true; break;
      case 1010: s3_credentials = optarg; break;
      case 1021: metrics_on = false; break;
      case 1030: auth_cfg.required = true; break;
      case 1031: auth_cfg.oidc_issuers.emplace_back(optarg); break;
      case 1032: auth_cfg.oidc_ca_bundle = optarg; break;
      case 1033: auth_cfg.audiences.emplace_back(optarg); break;
      case 1040: tls_opts.cert_file = optarg; break;
      case 1041: tls_opts.key_file = optarg; break;
      case 1042: tls_opts.client_ca_file = optarg; break;
      case 1050: std::cout << ais::router::OpenApiYaml(); return 0;
      case 1051: access_log_path = optarg; break;
      case 1052:
        if (!ais::ParseLogLevel(optarg, &log_level)) {
          std::cerr << "aistore-server: invalid --log-level " << optarg << " (expecting info, warning or error)\n";
          return 2;
        }
        break;
      case 'h': std::cout << kUsage; return 0;
      case 'v': std::cout << "aistore-server 0.1.0 (AIS API v1)\n"; return 0;
      default: std::cerr << kUsage; return 2;
    }
  }
  if (optind < argc) {
    std::cerr << "aistore-server: unexpected argument " << argv[optind] << "\n" << kUsage;
    return 2;
  }
  if (store_opts.mountpaths.empty()) {
    std::cerr << "aistore-server: at least one --mountpath is required\n" << kUsage;
    return 2;
  }
  for (auto& mp : store_opts.mountpaths) {
    if (mp.empty() || mp.front() != '/') {
      std::cerr << "aistore-server: --mountpath must be an absolute path: " << mp << "\n";
      return 2;
    }
  }
  // The key, as AIS reads it at start: an RSA public key over an HMAC secret over OIDC issuers.
  if (const char* pub = std::getenv("AIS_AUTHN_PUBLIC_KEY"); pub && *pub) {
    auth_cfg.signature_method = "RS256";
    auth_cfg.signature_key = pub;
  } else if (const char* secret = std::getenv("AIS_AUTHN_SECRET_KEY"); secret && *secret) {
    auth_cfg.signature_method = "HS256";
    auth_cfg.signature_key = secret;
  }
  std::unique_ptr<ais::auth::KeyProvider> oidc;
  if (!auth_cfg.oidc_issuers.empty() && auth_cfg.signature_key.empty()) {
    auto made = ais::auth::OidcKeyProvider::Make(auth_cfg);
    if (!made.ok()) {
      std::cerr << "aistore-server: " << made.status().message() << "\n";
      return 2;
    }
    oidc = std::move(*made);
  }
  auto authorizer = ais::auth::Authorizer::Make(auth_cfg, std::move(oidc));
  if (!authorizer.ok()) {
    std::cerr << "aistore-server: " << authorizer.status().message() << "\n";
    return 2;
  }
  if (tls_opts.cert_file.empty() != tls_opts.key_file.empty() ||
      (!tls_opts.client_ca_file.empty() && tls_opts.cert_file.empty())) {
    std::cerr << "aistore-server: --tls-cert and --tls-key go together (and --tls-client-ca needs them)\n";
    return 2;
  }
  if (tls_opts.enabled()) {
    auto tls_ctx = ais::MakeServerTlsContext(tls_opts);
    if (!tls_ctx.ok()) {
      std::cerr << "aistore-server: " << tls_ctx.status().message() << "\n";
      return 1;
    }
    http_opts.tls = *tls_ctx;
  }
  RaiseFdLimit();
  // sendfile(2) to a peer that hung up raises SIGPIPE (it has no MSG_NOSIGNAL): get EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  auto store = ais::Store::Open(store_opts);
  if (!store.ok()) {
    std::cerr << "aistore-server: " << store.status().message() << "\n";
    return 1;
  }
  ais::JobRegistry jobs{std::chrono::milliseconds(job_idle_ms)};
  ais::InventoryCatalog inventory(**store, jobs);
  ais::BatchService batch(batch_cfg, jobs);
  ais::CacheTier remote(**store, remote_opts);
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
                         .tls = tls_opts};
  ctx.promote_root = promote_root;
  ctx.auth = authorizer->get();
  ctx.max_page_size = max_page_size;
  if (s3_via_root) ctx.features.store(ais::kFeatS3ApiViaRoot);
  if (!s3_credentials.empty()) {
    auto keys = ais::s3::LoadAccessKeys(s3_credentials);
    if (!keys.ok()) {
      std::cerr << "aistore-server: " << keys.status().message() << "\n";
      return 2;
    }
    ctx.s3_access_keys = std::move(*keys);
  }
  ais::ServerLog().set_level(log_level);
  // Declared before the server: destroyed after it, once no request can record an entry.
  std::unique_ptr<ais::AccessLog> access_log;
  if (!access_log_path.empty()) {
    auto opened = ais::AccessLog::Open(access_log_path);
    if (!opened.ok()) {
      std::cerr << "aistore-server: " << opened.status().message() << "\n";
      return 2;
    }
    access_log = std::move(*opened);
    ctx.access_log = access_log.get();
  }
  ais::HttpServer server(http_opts, ctx.node, [&ctx](ais::Exchange& ex) { return ais::Dispatch(ctx, ex); });
  ctx.open_connections = [&server] { return static_cast<uint64_t>(server.open_connections()); };
  ais::ServerMetrics().set_enabled(metrics_on);
  auto port = server.Bind();
  if (!port.ok()) {
    std::cerr << "aistore-server: " << port.status().message() << "\n";
    return 1;
  }
  std::string shown = http_opts.host == "0.0.0.0" ? "127.0.0.1" : http_opts.host;
  const std::string scheme = tls_opts.enabled() ? "https://" : "http://";
  if (tls_opts.enabled()) {
    const std::string data_path = ais::TlsDataPathDescription();
    std::cout << "aistore-server: " << data_path << std::endl;
    ais::LogInfo(data_path);
  }
  std::cout << "aistore-server: listening on " << scheme << shown << ":" << *port << std::endl;
  ais::LogInfo("node " + ctx.node.node_id + " listening on " + scheme + shown + ":" + std::to_string(*port) + ", " +
               std::to_string(store_opts.mountpaths.size()) + " mountpath(s), cluster " + ctx.cluster_uuid);
  const bool loopback = http_opts.host == "127.0.0.1" || http_opts.host == "::1" || http_opts.host == "localhost";
  if (!loopback && !(*authorizer)->required()) {
    std::string warning = "WARNING: listening on " + http_opts.host +
                          " without access control: anyone who can reach this port can read, overwrite and "
                          "delete every object (see --auth-required, or bind --host 127.0.0.1)";
    std::cerr << "aistore-server: " << warning << std::endl;
    ais::LogWarning(warning);
  }
  if (!auth_cfg.oidc_issuers.empty() && auth_cfg.audiences.empty()) {
    const std::string warning =
        "WARNING: trusting OIDC issuers without --auth-audience: a token the issuer made for any other "
        "application (any audience) is accepted here";
    std::cerr << "aistore-server: " << warning << std::endl;
    ais::LogWarning(warning);
  }
  server.Run(/*handle_signals=*/true);
  // Work offloaded to worker threads posts its result back to the server's I/O contexts: it
  // ends before `server` (and the contexts) go. A key fetch in flight is cut short first.
  (*authorizer)->Shutdown();
  remote.pool().Shutdown();
  batch.Shutdown();  // batch threads use the store: stop them before it goes
  if (ais::Status st = (*store)->SaveHeaderSnapshots(); !st.ok()) {
    ais::LogWarning("saving the object headers for the next start: " + st.message());
  }
  std::cout << "aistore-server: stopped" << std::endl;
  return 0;
}
