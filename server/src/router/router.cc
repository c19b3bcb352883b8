#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <map>
#include <optional>

#include "router/router.h"

#include "api/moss_request.h"  // NormalizeProvider
#include "auth/authorizer.h"
#include "handlers/node_actions.h"  // ProxyId, kNodeStateHealthy
#include "metrics/access_log.h"
#include "metrics/metrics.h"
#include "remote/cache_tier.h"
#include "router/openapi.h"
#include "router/routes.h"
#include "s3/s3.h"
#include "service/access.h"
#include "service/context.h"
#include "service/offload.h"
#include "service/remote.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/clock.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {

namespace {

using router::RouteSpec;

router::Method MethodOf(http::verb m) {
  switch (m) {
    case http::verb::head: return router::Method::kHead;
    case http::verb::put: return router::Method::kPut;
    case http::verb::post: return router::Method::kPost;
    case http::verb::delete_: return router::Method::kDelete;
    case http::verb::patch: return router::Method::kPatch;
    default: return router::Method::kGet;
  }
}

// A method some row may have.
bool IsRestMethod(http::verb m) {
  return m == http::verb::get || m == http::verb::head || m == http::verb::put || m == http::verb::post ||
         m == http::verb::delete_ || m == http::verb::patch;
}

// The route table's row of this request, nullptr if none (or a method no row can have).
const RouteSpec* RowOf(const Result<Route>& route, const Exchange& ex) {
  if (!route.ok() || !IsRestMethod(ex.method())) return nullptr;
  return router::FindRoute(MethodOf(ex.method()), route.value());
}

// A request no row matches is served by no handler; it is still checked first, as a
// cluster-level call (SHOW-CLUSTER to read, ADMIN for anything else: a gap in the table can
// never open a route), then refused: 404 for an area the table does not have, 405 for a method
// its area does not take, 400 for a path of the wrong shape.
Status NoRoute(ServerContext& ctx, const Exchange& ex, const Route& route) {
  bool area = false, method = false;
  for (const RouteSpec& r : router::RouteTable()) {
    if (r.area != route.area || r.area.empty() || r.area == "s3") continue;
    area = true;
    method = method || router::MethodName(r.method) == ex.method_string();
  }
  if (!area || !std::all_of(router::RouteTable().begin(), router::RouteTable().end(),
                            [&](const RouteSpec& r) { return r.area != route.area || r.open; })) {
    const bool read = ex.method() == http::verb::get || ex.method() == http::verb::head;
    AIS_RETURN_IF_ERROR(Authorize(ctx, ex, read ? auth::kShowCluster : auth::kAdmin, nullptr));
  }
  if (!area) return Status::NotFound("invalid URL path \"" + std::string(ex.raw_path()) + "\"");
  if (!method) return Status::MethodNotAllowed("invalid method " + std::string(ex.method_string()));
  return Status::InvalidArgument("invalid URL path \"" + std::string(ex.raw_path()) + "\"");
}

// The check every request passes before its handler: the row's bits (or, for a row whose bits
// depend on its action message, a valid token now: the action's bits follow once it is read).
Status CheckAccess(ServerContext& ctx, const Exchange& ex, const Route& route, const RouteSpec& row) {
  if (row.open) return Status::OK();
  auth::AccessAttrs bits = row.bits;
  // Present and non-empty, as the handler tells (an empty `append_type=` is a plain PUT).
  if (!row.bits_query.empty() && !ex.query(row.bits_query).value_or("").empty()) bits = row.bits_query_bits;
  if (bits == 0) {  // by_action
    if (!ctx.auth || !ctx.auth->required()) return Status::OK();
    return Authenticate(ctx, ex).status();
  }
  return row.on_bucket ? AuthorizeRoute(ctx, ex, route, bits) : Authorize(ctx, ex, bits, nullptr);
}

// The action message of a row that takes one, decoded into *msg, and its action's bits checked;
// its row's action. An action the row does not list is refused (after the check with the bits
// unknown actions need).
Task<Result<const router::Action*>> ReadActionMsg(ServerContext& ctx, Exchange& ex, const Route& route,
                                                  const RouteSpec& row, ActionMsg* msg) {
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto decoded = ActionMsg::Decode(*body);
  if (!decoded.ok()) co_return decoded.status();
  *msg = std::move(*decoded);
  const router::Action* action = router::FindAction(row, msg->action);
  auth::AccessAttrs bits = action ? action->bits : row.unknown_action_bits;
  if (action && action->value_bits) bits |= action->value_bits(msg->value);
  if (Status st = AuthorizeRoute(ctx, ex, route, bits); !st.ok()) co_return st;
  if (!action) co_return Status::InvalidArgument("invalid action \"" + msg->action + "\"");
  co_return action;
}

// The node face a /v1/reverse request names in Ais-Node-Id.
Result<NodeRole> NodeRoleOf(const ServerContext& ctx, const Exchange& ex) {
  std::string node(ex.header("Ais-Node-Id"));
  if (node.empty()) return Status::InvalidArgument("missing node ID");
  if (node == ctx.node.daemon_id) return NodeRole::kTarget;
  if (node == ProxyId(ctx)) return NodeRole::kProxy;
  return Status::NotFound("node \"" + node + "\" does not exist (cluster map has t[" + ctx.node.daemon_id + "], p[" +
                          ProxyId(ctx) + "])");
}

// The store key of the path's bucket: resolved (ResolveBucket: validated, a remote one added on
// first use), or only validated and named.
Task<Result<std::string>> BucketOf(ServerContext& ctx, Exchange& ex, const Route& route, bool resolve) {
  if (resolve) co_return co_await ResolveBucket(ctx, ex, route.bucket);
  co_return NameBucket(ctx, ex, route.bucket);
}

// What a request with no handler for its bucket's kind is told.
Status WrongBucketKind(const ApiCall& call, std::string_view op, bool remote) {
  if (remote) {
    return Status::NotSupported("invalid action \"" + std::string(op) + "\": not supported for remote buckets (" +
                                BucketCname(call.bucket) + ")");
  }
  return Status::InvalidArgument(std::string(op) + ": expecting remote bucket (have " + BucketCname(call.bucket) + ")");
}

// The handler of the request's row, called. REQUIRES: `route` outlives the task.
Task<Handled> Serve(ServerContext& ctx, Exchange& ex, const Route& route, const RouteSpec& row) {
  if (Status st = CheckAccess(ctx, ex, route, row); !st.ok()) co_return st;
  ActionMsg msg;
  const router::Action* action = nullptr;
  if (!row.actions.empty()) {
    auto read = co_await ReadActionMsg(ctx, ex, route, row, &msg);
    if (!read.ok()) co_return read.status();
    action = *read;
  }
  ApiCall call{.route = route, .bucket = {}, .msg = msg};
  if (row.by_node) {
    auto role = NodeRoleOf(ctx, ex);
    if (!role.ok()) co_return role.status();
    call.role = *role;
  }
  const router::Serve& serve = action ? action->serve : row.serve;
  Handler handler = serve.local;
  if (row.on_bucket) {
    auto key = co_await BucketOf(ctx, ex, route, action ? action->resolve : true);
    if (!key.ok()) co_return key.status();
    call.bucket = std::move(*key);
    const bool remote = IsRemoteKey(call.bucket);
    if (remote) handler = serve.remote;
    if (!handler) co_return WrongBucketKind(call, action ? action->name : row.summary, remote);
  }
  if (row.path.ends_with("/{object}")) {
    if (Status st = ValidateObjectName(route.object, ex.is_head()); !st.ok()) co_return st;
  }
  if (!row.what.empty()) {
    const std::string what = ex.query("what").value_or("");
    const router::WhatValue* w = router::FindWhat(row, what);
    if (!w) co_return Status::InvalidArgument(router::UnknownWhatMessage(row, what));
    handler = w->handler;
  }
  co_return co_await handler(ctx, ex, call);
}

// The S3 front end's task for `path`: the table's row of its method and shape, and the
// operation its selectors pick (*op: its metrics label). Not a coroutine, so the task owns what
// it needs (GCC 12 mishandles such locals in the dispatcher's own frame).
Task<void> ServeS3(ServerContext& ctx, Exchange& ex, std::string_view path, Op* op_label) {
  s3::Target target = s3::ParseTarget(path);
  const RouteSpec* row = nullptr;
  if (target.error.ok() && IsRestMethod(ex.method())) {
    row = router::FindS3Route(MethodOf(ex.method()), !target.bucket_name.empty(), !target.key.empty());
  }
  const s3::Operation* op = row ? router::FindS3Operation(*row, ex) : nullptr;
  if (op) *op_label = op->op;
  return s3::Serve(ctx, ex, std::move(target), op, row ? row->bits : auth::kAdmin, row ? row->s3_unmatched : "");
}

// What the metrics count a request as.
Op Classify(const Exchange& ex, const RouteSpec* row) {
  if (!row) return Op::kOther;
  if (!row->bits_query.empty() && !ex.query(row->bits_query).value_or("").empty()) return row->bits_query_op;
  return row->op;
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
  for (const auto& p : tokens ? std::vector<std::string>() : ctx.store.mountpaths().Attached()) {
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
      (void)co_await ex.Reply(http::status::ok, {}, router::OpenApiYaml(), "application/yaml");
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
    Op op = Op::kOther;
    Task<void> serve = ServeS3(ctx, ex, *s3_path, &op);
    if (metrics.enabled()) counter.emplace(metrics, ex, op, start);
    co_await std::move(serve);
  } else {
    const Result<Route> route = ParseRoute(ex.raw_path());
    const RouteSpec* row = RowOf(route, ex);
    if (metrics.enabled()) counter.emplace(metrics, ex, Classify(ex, row), start);
    // (Statements, not a conditional expression: GCC 12 mishandles temporaries across a
    // co_await inside one.)
    Handled h = Status::OK();
    if (!route.ok()) {
      h = route.status();
    } else if (!row) {
      h = NoRoute(ctx, ex, route.value());
    } else {
      h = co_await Serve(ctx, ex, route.value(), *row);
    }
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
