// Health, the cluster queries (GET /v1/cluster?what=..., the node ones under /v1/daemon go to
// node_actions.cc) and jobs: the "cluster" face of this one-proxy, one-target cluster.
#include <chrono>
#include <ctime>

#include "api/features.h"
#include "api/headers.h"
#include "api/moss_request.h"  // NormalizeProvider
#include "auth/authorizer.h"
#include "service/access.h"
#include "service/context.h"
#include "service/offload.h"
#include "remote/cache_tier.h"
#include "store/bck.h"
#include "handlers/handlers.h"
#include "handlers/node_actions.h"
#include "jobs/job_kinds.h"
#include "util/clock.h"
#include "util/json_fields.h"
#include "util/json_text.h"
#include "util/go_time.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

// A job's bucket (a store key: "b", or "aws/b" for s3://b) as cmn.Bck; "" (none) is the empty
// cmn.Bck, provider "" too, which the CLI shows as "-" (any other is a bucket to it).
nlohmann::json BucketJson(const std::string& key) {
  std::string_view provider = key.empty() ? std::string_view() : KeyProvider(key);
  const BucketNs ns = KeyNs(key);
  return {{"name", KeyName(key)}, {"provider", provider}, {"namespace", {{"uuid", ns.uuid}, {"name", ns.name}}}};
}

// A job that failed stopped there: AIS reports it aborted, with the error (xact.Base.Abort(err)).
// Errors a job went on past show in "err" only.
bool Stopped(const JobSnapshot& j) { return j.aborted || !j.err.empty(); }
std::string ErrText(const JobSnapshot& j) { return j.err.empty() ? j.soft_err : j.err; }

nlohmann::json StatusJson(const JobSnapshot& j) {
  return {{"kind", j.kind}, {"uuid", j.id}, {"err", ErrText(j)}, {"end_time", j.end_ns}, {"aborted", Stopped(j)}};
}

nlohmann::json SnapJson(const JobSnapshot& j) {
  auto n = [](int64_t v) { return std::to_string(v); };
  // As AIS (xact.Base.IsIdle): a finished job is idle; a running one of a kind that idles
  // (copy-listrange, get-batch, ...) is while it waits for more work.
  const JobKind* jk = FindJobKind(j.kind);
  bool idle = !j.running() || (j.idle && jk != nullptr && jk->idles);
  const bool from_to = !j.dst_bucket.empty();
  nlohmann::json snap = {{"ext", nullptr},
                         {"start-time", GoTimeText(j.start_ns)},
                         {"end-time", GoTimeText(j.end_ns)},
                         {"bck", BucketJson(j.bucket)},
                         // Only a job from one bucket to another has these (xact.Snap), and
                         // the CLI shows its SRC/DST columns by them.
                         {"src-bck", BucketJson(from_to ? j.bucket : std::string())},
                         {"dst-bck", BucketJson(j.dst_bucket)},
                         {"id", j.id},
                         {"kind", j.kind},
                         {"abort-err", !j.err.empty() ? j.err : (j.aborted ? "aborted" : "")},
                         {"err", ErrText(j)},
                         {"glob.id", "0"},
                         {"stats",
                          {{"loc-objs", n(j.objs)},
                           {"loc-bytes", n(j.bytes)},
                           {"out-objs", "0"},
                           {"out-bytes", "0"},
                           {"in-objs", "0"},
                           {"in-bytes", "0"}}},
                         {"aborted", Stopped(j)},
                         {"is_idle", idle}};
  if (!j.ctlmsg.empty()) snap["ctlmsg"] = j.ctlmsg;
  return snap;
}

// A bucket a job query names, as the store key its jobs are registered under: an ais:// bucket
// or an s3://, gs:// or az:// one (prefetch, evict, delete... run on remote buckets too).
Result<std::string> QueryKey(const BucketRef& b, std::string_view what) { return b.Key(what); }

// The one bucket a job query names: "bck", else the only one of "buckets" ("" = any).
Result<std::string> QueryBucket(const XactMsg& q) {
  auto bck = QueryKey(q.bck, "bck");
  if (!bck.ok()) return bck.status();
  std::vector<std::string> keys;
  for (const auto& b : q.buckets) {
    auto k = QueryKey(b, "buckets");
    if (!k.ok()) return k.status();
    keys.push_back(std::move(*k));
  }
  if (!bck->empty()) return *bck;
  return keys.size() == 1 ? keys.front() : std::string();
}

// /v1/daemon/mountpaths (AIS api.EnableMountpath & co.): value "<path>".
Result<std::string> MountpathOf(const ActionMsg& msg) {
  if (!msg.value.is_string() || msg.value.get<std::string>().empty()) {
    return Status::InvalidArgument("invalid mountpath value in request: " + JsonText(msg.value).substr(0, 256));
  }
  return msg.value.get<std::string>();
}

}  // namespace

Task<Handled> EnableMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto path = MountpathOf(call.msg);
  if (!path.ok()) co_return path.status();
  if (Status st = ctx.store.EnableMountpath(*path); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

namespace {

// AIS QparamDontResilver ("dntres"): true leaves the objects where they are (a detached
// mountpath's are gone from this node, unless mirrored). Refused while a resilver runs, as AIS.
Result<bool> DontResilver(ServerContext& ctx, const Exchange& ex) {
  const std::string v = ex.query("dntres").value_or("");
  bool on = false;
  if (v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True") {
    on = true;
  } else if (!(v.empty() || v == "false" || v == "0" || v == "f" || v == "F" || v == "FALSE" || v == "False")) {
    return Status::InvalidArgument("invalid query parameter dntres=\"" + v.substr(0, 32) + "\" (expecting a boolean)");
  }
  if (on && !ctx.jobs.Query("", "resilver", "", true).empty()) {
    return Status::InvalidArgument(
        "cannot use --no-resilver (or the respective query parameter) while resilver is in progress");
  }
  return on;
}

}  // namespace

Task<Handled> DisableMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto path = MountpathOf(call.msg);
  if (!path.ok()) co_return path.status();
  auto dont = DontResilver(ctx, ex);
  if (!dont.ok()) co_return dont.status();
  if (Status st = ctx.store.DisableMountpath(*path, "disabled by request", !*dont); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> AttachMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto path = MountpathOf(call.msg);
  if (!path.ok()) co_return path.status();
  if (!ex.query("mountpath_label").value_or("").empty()) {
    co_return Status::NotSupported("attach-mp: mountpath labels are not supported here (mountpath_label)");
  }
  if (Status st = ctx.store.AttachMountpath(*path); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> DetachMountpath(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto path = MountpathOf(call.msg);
  if (!path.ok()) co_return path.status();
  auto dont = DontResilver(ctx, ex);
  if (!dont.ok()) co_return dont.status();
  if (Status st = ctx.store.DetachMountpath(*path, !*dont); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

namespace {

// A job query's body (xact.QueryMsg), decoded.
struct JobQueryArgs {
  nlohmann::json body;
  XactMsg msg;
  std::string bucket;  // the store key it names ("" = any)
  std::string kind;    // normalized
};

Task<Result<JobQueryArgs>> ReadJobQuery(Exchange& ex) {
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto q = XactMsg::Decode(*body, "");
  if (!q.ok()) co_return q.status();
  auto bucket = QueryBucket(*q);
  if (!bucket.ok()) co_return bucket.status();
  const std::string kind = NormalizeJobKind(q->kind);
  co_return JobQueryArgs{.body = std::move(*body), .msg = std::move(*q), .bucket = std::move(*bucket), .kind = kind};
}

}  // namespace

Task<Handled> QueryJobStatus(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto q = co_await ReadJobQuery(ex);
  if (!q.ok()) co_return q.status();
  const std::string& id = q->msg.id;
  if (id.empty() && q->kind.empty()) co_return Status::InvalidArgument("job status query requires a job ID or kind");
  auto jobs = ctx.jobs.Query(id, "", q->bucket, false);
  if (jobs.empty()) co_return Status::NotFound("job \"" + id + "\" not found");
  if (!q->kind.empty() && jobs.front().kind != q->kind) {
    co_return Status::InvalidArgument("kind mismatch: " + q->kind + " vs " + jobs.front().kind);
  }
  co_return co_await ReplyJson(ex, StatusJson(jobs.front()));
}

Task<Handled> QueryJobsStatus(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto q = co_await ReadJobQuery(ex);
  if (!q.ok()) co_return q.status();
  nlohmann::json out = nlohmann::json::array();
  for (auto& j : ctx.jobs.Query(q->msg.id, q->kind, q->bucket, q->msg.show_active.value_or(false))) {
    out.push_back(StatusJson(j));
  }
  co_return co_await ReplyJson(ex, out);
}

// As AIS: a kind it knows that has no job here is an empty list, not an error (the CLI asks for
// every kind in turn); an unknown kind, or an id that matches nothing, is a 404.
Task<Handled> QueryJobSnapshots(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto q = co_await ReadJobQuery(ex);
  if (!q.ok()) co_return q.status();
  auto jobs = ctx.jobs.Query(q->msg.id, q->kind, q->bucket, q->msg.show_active.value_or(false));
  const bool known = q->kind.empty() || FindJobKind(q->kind) != nullptr;
  if (jobs.empty() && (!known || !q->msg.id.empty())) {
    co_return Status::NotFound("\"" + JsonText(q->body).substr(0, 512) + "\" not found");
  }
  nlohmann::json snaps = nlohmann::json::array();
  for (auto& j : jobs) snaps.push_back(SnapJson(j));
  const nlohmann::json out = {{ctx.node.daemon_id, snaps}};
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> QueryRunningJobs(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto q = co_await ReadJobQuery(ex);
  if (!q.ok()) co_return q.status();
  nlohmann::json out = nlohmann::json::array();
  for (auto& j : ctx.jobs.Query(q->msg.id, q->kind, q->bucket, true)) out.push_back(j.kind + "[" + j.id + "]");
  co_return co_await ReplyJson(ex, out);
}


Task<Handled> QueryClusterConfig(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ReplyJson(ex, ClusterConfigJson(ctx, ex));
}

// The cloud backends configured.
Task<Handled> QueryBackends(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  nlohmann::json out = nlohmann::json::array();
  if (ctx.remote.aws_enabled()) out.push_back(std::string(kProviderAws));
  if (ctx.remote.CheckEnabled(kProviderGcp).ok()) out.push_back(std::string(kProviderGcp));
  if (ctx.remote.CheckEnabled(kProviderAzure).ok()) out.push_back(std::string(kProviderAzure));
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> QueryRemoteClusters(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  std::function<Result<nlohmann::json>()> show = [&tier = ctx.remote] {
    return Result<nlohmann::json>(RemoteClustersJson(tier.ais_clusters()));
  };
  auto out = co_await Offload<nlohmann::json>(ctx.remote.pool(), std::move(show));  // probes each
  if (!out.ok()) co_return out.status();
  co_return co_await ReplyJson(ex, *out);
}

// PUT /v1/cluster/attach?what=remote (`ais cluster remote-attach ALIAS=URL`): headers
// Ais-Remote-Ais-Alias and Ais-Remote-Ais-Url, no body.
Task<Handled> AttachRemoteCluster(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  const std::string alias(ex.header("Ais-Remote-Ais-Alias")), url(ex.header("Ais-Remote-Ais-Url"));
  if (alias.empty() || url.empty()) {
    co_return Status::InvalidArgument("remote-attach: missing header Ais-Remote-Ais-Alias or Ais-Remote-Ais-Url");
  }
  std::function<Status()> attach = [&tier = ctx.remote, alias, url] { return tier.ais_clusters().Attach(alias, url); };
  if (Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(attach)); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// PUT /v1/cluster/detach?what=remote (`ais cluster remote-detach ALIAS`). The cached buckets of
// the cluster stay in the BMD (reachable again once it is attached again).
Task<Handled> DetachRemoteCluster(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  const std::string alias(ex.header("Ais-Remote-Ais-Alias"));
  if (alias.empty()) co_return Status::InvalidArgument("remote-detach: missing header Ais-Remote-Ais-Alias");
  if (Status st = ctx.remote.ais_clusters().Detach(alias); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> QueryClusterMountpaths(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  const nlohmann::json out = {{"targets", {{ctx.node.daemon_id, MountpathListJson(ctx.store)}}}};
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> QueryTargetIps(ServerContext&, Exchange& ex, const ApiCall&) {
  std::string host(ex.header("Host"));
  host = host.substr(0, host.rfind(':'));
  co_return co_await ex.Reply(http::status::ok, {}, host + "," + host + "," + host, "text/plain; charset=utf-8");
}

Task<Handled> QueryClusterNodeStats(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ReplyJson(ex, ClusterNodeStatsJson(ctx, ex));
}

Task<Handled> QueryClusterSysinfo(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ReplyJson(ex, ClusterSysinfoJson(ctx));
}

namespace {

// auth.client_auth_required at run time. Turning it on takes the caller's own valid token with
// ADMIN (so that nobody locks the cluster with a key they have no token of); turning it off is
// admin-only already (cluster PUT).
Status SetAuthRequired(ServerContext& ctx, const Exchange& ex, bool on) {
  if (!ctx.auth) return Status::NotSupported("access control is not configured on this server");
  if (on && !ctx.auth->required()) {
    auto claims = Authenticate(ctx, ex);
    if (!claims.ok()) return claims.status();
    if (!(*claims)->admin) {
      return Status::Unauthorized("requiring tokens takes an admin token (user `" + (*claims)->sub + "` is not admin)");
    }
  }
  AIS_RETURN_IF_ERROR(ctx.auth->SetRequired(on));
  LogInfo(std::string("set-config: auth.client_auth_required=") + (on ? "true" : "false"));
  return Status::OK();
}

Result<bool> ParseBoolText(const std::string& key, const std::string& text) {
  if (IEquals(text, "true")) return true;
  if (IEquals(text, "false")) return false;
  return Status::InvalidArgument("set-config: invalid " + key + " \"" + text.substr(0, 32) + "\" (expecting true or false)");
}

// set-config (`PUT /v1/cluster/setconfig?features=...&auth.client_auth_required=...`, or action
// "set-config" with value {"features": "...", "auth": {"client_auth_required": true}}): of the
// cluster config, the feature flags, whether tokens are required, the log level and the space
// and lru sections (store/space_config.h) change at run time here; not kept across a restart.
Task<Handled> ApplyConfig(ServerContext& ctx, Exchange& ex, const nlohmann::json* value) {
  std::optional<std::string> features;
  std::optional<bool> auth_required;
  std::optional<std::string> log_level;
  SpaceConfig space = ctx.store.capacity().config();
  bool space_given = false;
  if (value) {
    JsonFields f(*value, "value");
    const nlohmann::json* feat = nullptr;
    std::optional<bool> enabled;  // the pre-5.0 name of client_auth_required
    const nlohmann::json* level = nullptr;
    f.Raw("features", &feat).Object("auth", [&](JsonFields& a) {
      a.OptBool("client_auth_required", &auth_required).OptBool("enabled", &enabled);
    }).Object("log", [&](JsonFields& l) { l.Raw("level", &level); });
    space_given = value->is_object() && (value->contains("space") || value->contains("lru"));
    f.Object("space", [&](JsonFields& sp) { space.ReadSpace(sp); });
    f.Object("lru", [&](JsonFields& l) { space.ReadLru(l); });
    if (!auth_required) auth_required = enabled;
    if (Status st = f.Finish(); !st.ok()) co_return st;
    if (feat && feat->is_string()) features = feat->get<std::string>();
    else if (feat && feat->is_number_unsigned()) features = std::to_string(feat->get<uint64_t>());
    else if (feat) co_return Status::InvalidArgument("set-config: expecting {\"features\": \"<names or number>\"}");
    if (level && level->is_string()) log_level = level->get<std::string>();
    else if (level && level->is_number_unsigned()) log_level = std::to_string(level->get<uint64_t>());
    else if (level) co_return Status::InvalidArgument("set-config: expecting {\"log\": {\"level\": \"<level>\"}}");
  } else {
    features = ex.query("features");
    log_level = ex.query("log.level");
    for (const char* key : {"auth.client_auth_required", "auth.enabled"}) {
      if (auto q = ex.query(key)) {
        auto on = ParseBoolText(key, *q);
        if (!on.ok()) co_return on.status();
        auth_required = *on;
      }
    }
    for (const char* key : {"space.cleanupwm", "space.lowwm", "space.highwm", "space.out_of_space", "lru.enabled",
                            "lru.dont_evict_time", "lru.capacity_upd_time"}) {
      auto q = ex.query(key);
      if (!q) continue;
      bool known = false;
      if (Status st = space.SetKey(key, *q, &known); !st.ok()) co_return Status::InvalidArgument("set-config: " + st.message());
      space_given = true;
    }
  }
  if (!features && !auth_required && !log_level && !space_given) {
    co_return Status::InvalidArgument(
        "set-config: nothing to set (only \"features\", \"auth.client_auth_required\", \"log.level\", "
        "\"space.*\" and \"lru.*\" can be set here)");
  }
  if (space_given) {
    if (Status st = space.Validate(ctx.store.capacity().min_dont_evict()); !st.ok()) {
      co_return Status::InvalidArgument("set-config: " + st.message());
    }
  }
  // Everything is checked before anything changes: a request with one bad key changes nothing.
  LogSeverity level = LogSeverity::kInfo;
  if (log_level && !ParseLogLevel(*log_level, &level)) {
    co_return Status::InvalidArgument("set-config: invalid log.level \"" + log_level->substr(0, 32) +
                                      "\" (expecting info, warning, error, or AIS verbosity 0-5)");
  }
  std::optional<uint64_t> bits;
  if (features) {
    auto parsed = ParseClusterFeatures(*features);
    if (!parsed.ok()) co_return parsed.status();
    bits = *parsed;
  }
  if (auth_required) {
    if (Status st = SetAuthRequired(ctx, ex, *auth_required); !st.ok()) co_return st;
  }
  if (bits) {
    ctx.features.store(*bits, std::memory_order_relaxed);
    LogInfo("set-config: features=" + std::to_string(*bits));
  }
  if (log_level) {
    LogWarning("set-config: log.level=" + std::string(LogLevelName(level)));  // a warning: kept at any level
    ServerLog().set_level(level);
  }
  if (space_given) {
    if (Status st = ctx.store.capacity().SetConfig(space); !st.ok()) co_return st;
    LogInfo("set-config: space " + space.SpaceJson().dump() + ", lru " + space.LruJson().dump());
    (void)ctx.store.capacity().Refresh();  // new watermarks act now (above highwm: the lru job)
  }
  co_return co_await ex.Reply(http::status::ok);
}

}  // namespace

Task<Handled> SetConfig(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ApplyConfig(ctx, ex, &call.msg.value);
}

Task<Handled> SetConfigByQuery(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ApplyConfig(ctx, ex, nullptr);
}

Task<Handled> StopJobs(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto args = XactMsg::Decode(call.msg.value, "value");
  if (!args.ok()) co_return args.status();
  auto bucket = QueryBucket(*args);
  if (!bucket.ok()) co_return bucket.status();
  auto jobs = ctx.jobs.Query(args->id, NormalizeJobKind(args->kind), *bucket, true);
  for (auto& j : jobs) ctx.jobs.Abort(j.id);
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> GetHealth(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  std::string uptime = std::to_string(NowNs() - ctx.start_ns);
  // Named, not braced in the co_await: GCC 12 cannot keep an initializer_list array across a suspension.
  HeaderList headers = {{hdr::kNodeUptime, uptime}, {hdr::kClusterUptime, uptime}};
  co_return co_await ex.Reply(http::status::ok, headers);
}

namespace {

// dSort jobs: this server runs none, so there are none to list; one asked for by id is not found.
Task<Handled> EmptyJobList(Exchange& ex, std::string_view area, const std::string& id) {
  if (id.empty()) co_return co_await ex.Reply(http::status::ok, {}, "[]", "application/json");
  co_return Status::NotFound(std::string(area) + " job \"" + id.substr(0, 64) + "\" not found");
}

}  // namespace

Task<Handled> ListSortJobs(ServerContext&, Exchange& ex, const ApiCall&) {
  co_return co_await EmptyJobList(ex, "sort", ex.query("uuid").value_or(ex.query("id").value_or("")));  // ?uuid=<job>
}

}  // namespace ais
