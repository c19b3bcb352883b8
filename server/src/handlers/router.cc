#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <map>
#include <optional>

#include "api/moss_request.h"
#include "api/openapi.h"
#include "auth/authorizer.h"
#include "handlers/access.h"
#include "handlers/context.h"
#include "handlers/node_actions.h"
#include "handlers/offload.h"
#include "remote/cache_tier.h"
#include "s3/s3.h"
#include "util/log_ring.h"
#include "metrics/access_log.h"
#include "metrics/metrics.h"
#include "util/clock.h"
#include "util/strings.h"

namespace ais {

Task<Result<nlohmann::json>> ReadJsonBody(Exchange& ex) {
  auto body = co_await ex.ReadBody(DefaultJsonLimits().max_body);
  if (!body.ok()) co_return body.status();
  co_return ParseJson(*body);
}

Task<Result<ActionMsg>> ReadActionMsg(ServerContext& ctx, Exchange& ex) {
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto msg = ActionMsg::Decode(*body);
  if (!msg.ok()) co_return msg;
  auto route = ParseRoute(ex.raw_path());
  if (!route.ok()) co_return route.status();
  Status st = AuthorizeRoute(ctx, ex, *route, ActionAccess(*route, ex, msg->action, msg->value));
  if (!st.ok()) co_return st;
  co_return msg;
}

Status CheckNamespace(const Exchange& ex) {
  auto ns = ex.query("namespace");
  if (!ns || ns->empty() || *ns == "@#") return Status::OK();
  // AIS syntax: "#name" (a namespace of this cluster) or "@uuid#name" (of a remote cluster).
  auto sep = ns->find('#');
  auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  bool valid = (ns->front() == '@' || ns->front() == '#') && sep != std::string::npos &&
               std::all_of(ns->begin() + 1, ns->end(), [&](char c) { return c == '#' || ok_char(c); }) &&
               ns->find('#', sep + 1) == std::string::npos;
  if (!valid) {
    return Status::InvalidArgument("invalid namespace \"" + ns->substr(0, 64) + "\" (expecting @uuid#name or #name)");
  }
  return Status::NotSupported("bucket namespaces are not supported by this server");
}

Status CheckProvider(const Exchange& ex) {
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  if (!provider.ok()) return provider.status();
  if (*provider != "ais") {
    return Status::NotSupported("provider \"" + *provider +
                                "\" is not served by this single-node server (only \"ais\")");
  }
  return CheckNamespace(ex);
}

namespace {

Task<Handled> Fail(Status st) { co_return st; }

// The check every request passes before its handler (handlers/access.h).
Status CheckAccess(ServerContext& ctx, const Exchange& ex, const Route& route) {
  const RouteAccess need = RequiredAccess(route, ex);
  if (need.open) return Status::OK();
  if (need.bits == 0) {  // by_action: a valid token now, its bits once the action is known
    if (!ctx.auth || !ctx.auth->required()) return Status::OK();
    auto claims = Authenticate(ctx, ex);
    return claims.status();
  }
  return need.on_bucket ? AuthorizeRoute(ctx, ex, route, need.bits) : Authorize(ctx, ex, need.bits, nullptr);
}

// The handler of `route`. Not a coroutine, so a request pays for no frame of its own here.
// REQUIRES: `parsed` outlives the task.
Task<Handled> Serve(ServerContext& ctx, Exchange& ex, const Result<Route>& parsed) {
  if (!parsed.ok()) return Fail(parsed.status());
  const Route& route = parsed.value();
  if (Status st = CheckAccess(ctx, ex, route); !st.ok()) return Fail(std::move(st));
  if (route.area == "health") return HandleHealth(ctx, ex);
  if (route.area == "tokens") return HandleTokens(ctx, ex, route);
  if (route.area == "daemon" || route.area == "cluster") return HandleCluster(ctx, ex, route);
  if (route.area == "buckets") return HandleBuckets(ctx, ex, route);
  if (route.area == "objects") return HandleObjects(ctx, ex, route);
  if (route.area == "ml") return HandleMl(ctx, ex, route);
  if (route.area == "reverse") return HandleReverse(ctx, ex, route);
  if (route.area == "download" || route.area == "sort") return HandleJobLists(ctx, ex, route);
  return Fail(Status::NotFound("invalid URL path \"" + std::string(ex.raw_path()) + "\""));
}

// What the metrics count a request as.
Op Classify(const Exchange& ex, const Result<Route>& parsed) {
  if (!parsed.ok()) return Op::kOther;
  const Route& route = parsed.value();
  const std::string& area = route.area;
  const http::verb m = ex.method();
  if (area == "objects" && !route.object.empty()) {
    switch (m) {
      case http::verb::get: return Op::kGet;
      case http::verb::head: return Op::kHead;
      case http::verb::delete_: return Op::kDelete;
      case http::verb::put: return ex.query("append_type").value_or("").empty() ? Op::kPut : Op::kAppend;
      default: return Op::kOther;
    }
  }
  if (area == "buckets" && m == http::verb::get && !route.bucket.empty()) return Op::kList;
  if (area == "ml") return Op::kGetBatch;
  return Op::kOther;
}

// The same for an S3 request ("/<bucket>[/<key>]"): object calls by method, a bucket GET a listing.
Op ClassifyS3(const Exchange& ex, std::string_view path) {
  const bool has_key = path.size() > 1 && path.find('/', 1) != std::string_view::npos &&
                       path.find('/', 1) + 1 < path.size();
  const http::verb m = ex.method();
  if (!has_key) return m == http::verb::get && path.size() > 1 && !ex.query("uploads") ? Op::kList : Op::kOther;
  if (ex.query("uploadId") || ex.query("uploads")) return m == http::verb::put ? Op::kPut : Op::kOther;
  switch (m) {
    case http::verb::get: return Op::kGet;
    case http::verb::head: return Op::kHead;
    case http::verb::delete_: return Op::kDelete;
    case http::verb::put: return Op::kPut;
    default: return Op::kOther;
  }
}

// GET /metrics (Prometheus): the counters, and gauges read now from the store and the job registry.
Task<Handled> ServeMetrics(ServerContext& ctx, Exchange& ex) {
  MetricsSnapshot snap;
  snap.uptime_ns = NowNs() - ctx.start_ns;
  snap.state_flags = kNodeStateHealthy;
  if (ctx.open_connections) snap.connections = ctx.open_connections();
  // Open to any scraper (as AIS): with tokens required it names no mountpath (the server's
  // directory layout); GET /v1/daemon?what=mountpaths, which takes a token, does.
  const bool tokens = ctx.auth && ctx.auth->required();
  for (const auto& p : tokens ? std::vector<std::string>() : ctx.store.mountpaths().paths()) {
    struct statvfs v{};
    if (::statvfs(p.c_str(), &v) != 0) continue;
    const uint64_t total = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
    snap.mountpaths.push_back({p, total, total - static_cast<uint64_t>(v.f_bfree) * v.f_frsize});
  }
  std::map<std::pair<std::string, std::string>, uint64_t> jobs;  // (kind, state) -> count
  for (const auto& j : ctx.jobs.Query("", "", "", false)) {
    const char* state = j.running() ? (j.idle ? "idle" : "running")
                        : j.aborted ? "aborted"
                        : j.err.empty() ? "finished"
                                        : "failed";
    ++jobs[{j.kind, state}];
  }
  for (const auto& [key, n] : jobs) snap.jobs.push_back({key.first, key.second, n});
  if (ctx.access_log) {
    snap.access_log = true;
    snap.access_log_lines = ctx.access_log->written();
    snap.access_log_dropped = ctx.access_log->dropped();
  }
  co_return co_await ex.Reply(http::status::ok, {}, ServerMetrics().Exposition(ctx.node.daemon_id, snap),
                              "text/plain; version=0.0.4; charset=utf-8");
}

// One access log line (metrics/access_log.h). Only the copies of method, path and address are
// made here, on the I/O thread; formatting and writing happen on the log's writer thread.
void LogAccess(AccessLog& log, const Exchange& ex, std::chrono::steady_clock::time_point start) {
  const auto now = std::chrono::steady_clock::now();
  AccessEntry e;
  e.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  e.method = std::string(ex.method_string());
  e.path = std::string(ex.raw_path());
  e.status = ex.reply_status();
  e.bytes = ex.reply_bytes();
  e.duration_us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - start).count());
  e.remote = std::string(ex.remote_addr());
  log.Record(std::move(e));
}

// Counts a request in the metrics as its reply begins, before any byte of it is written, and
// its latency when Finish is called, once the reply is out. Observes the exchange while it lives.
class RequestCounter final : public ReplyObserver {
 public:
  RequestCounter(Metrics& metrics, Exchange& ex, Op op, std::chrono::steady_clock::time_point start)
      : metrics_(metrics),
        ex_(ex),
        op_(op),
        range_(op == Op::kGet && !ex.header("Range").empty()),
        put_bytes_(op == Op::kPut || op == Op::kAppend ? ex.content_length().value_or(0) : 0),
        start_(start) {
    metrics_.AddInFlight(1);
    ex_.set_reply_observer(this);
  }
  ~RequestCounter() { ex_.set_reply_observer(nullptr); }
  RequestCounter(const RequestCounter&) = delete;
  RequestCounter& operator=(const RequestCounter&) = delete;

  void OnReplyBegin(unsigned status, uint64_t body_bytes) override {
    counted_ = true;
    ok_ = status < 300;
    uint64_t bytes = 0;
    if (ok_) bytes = serves_bytes() ? body_bytes : put_bytes_;
    if (range_) metrics_.RecordRangeGet();
    metrics_.Count(op_, status, bytes);
  }
  void OnStreamBytes(uint64_t n) override {
    if (ok_ && serves_bytes()) metrics_.AddBytes(op_, n);
  }
  // The reply is out (or the request ended without one: counted now, with status 0).
  void Finish() {
    if (!counted_) OnReplyBegin(0, 0);
    metrics_.AddInFlight(-1);
    const auto took = std::chrono::steady_clock::now() - start_;
    metrics_.RecordLatency(op_, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
  }

 private:
  bool serves_bytes() const { return op_ == Op::kGet || op_ == Op::kGetBatch; }

  Metrics& metrics_;
  Exchange& ex_;
  const Op op_;
  const bool range_;
  const uint64_t put_bytes_;  // the request body's length: what a PUT or append moves
  const std::chrono::steady_clock::time_point start_;
  bool counted_ = false;
  bool ok_ = false;
};

}  // namespace

// The one error path: a handler that did not reply returns the Status, replied here. Every
// request is counted in the metrics (RequestCounter) and written to the access log.
Task<void> Dispatch(ServerContext& ctx, Exchange& ex) {
  AccessLog* const access_log = ctx.access_log;  // null (off): one test per request, nothing else
  const auto start = std::chrono::steady_clock::now();
  if ((ex.raw_path() == "/metrics" || ex.raw_path() == "/openapi.yaml") &&
      (ex.method() == http::verb::get || ex.is_head())) {  // not counted: the scrape would count itself
    if (ex.raw_path() == "/metrics") {
      (void)co_await ServeMetrics(ctx, ex);
    } else {
      (void)co_await ex.Reply(http::status::ok, {}, api::OpenApiYaml(), "application/yaml");
    }
    if (access_log) LogAccess(*access_log, ex, start);
    co_return;
  }
  Metrics& metrics = ServerMetrics();
  std::optional<RequestCounter> counter;  // outlives the reply it observes
  if (ctx.auth && ctx.auth->required() && ctx.auth->fetches_keys()) {
    // A token whose key must be fetched first (a new OIDC issuer key): fetched on a worker thread,
    // so that the checks below, which run on this I/O thread, find it at hand. Its failure shows
    // there, as the token's refusal.
    if (std::function<Status()> fetch = ctx.auth->KeyFetchFor(ex.header("Authorization"), AmzSecurityToken(ex))) {
      (void)co_await OffloadStatus(ctx.remote.pool(), std::move(fetch));
    }
  }
  if (auto s3_path = s3::S3PathOf(ctx, ex.raw_path())) {  // the S3 front end replies its own way
    if (metrics.enabled()) counter.emplace(metrics, ex, ClassifyS3(ex, *s3_path), start);
    co_await s3::Serve(ctx, ex, *s3_path);
  } else {
    const Result<Route> route = ParseRoute(ex.raw_path());
    if (metrics.enabled()) counter.emplace(metrics, ex, Classify(ex, route), start);
    Handled h = co_await Serve(ctx, ex, route);
    if (!h.replied()) {
      if (ex.replied()) {  // a bug: an error after a reply began (Handled's contract forbids it)
        LogError(std::string(ex.raw_path()) + ": error after the reply began: " + h.status().message());
      } else {
        co_await ex.ReplyError(h.status());
      }
    }
  }
  if (access_log) LogAccess(*access_log, ex, start);
  if (counter) counter->Finish();
}

}  // namespace ais
