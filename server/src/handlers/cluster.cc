// Health, cluster map (Smap) and jobs: the "cluster" face of this one-node cluster.
#include <chrono>
#include <ctime>
#include <xxhash.h>

#include "api/headers.h"
#include "handlers/context.h"
#include "handlers/node_actions.h"
#include "jobs/job_kinds.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace ais {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// RFC3339Nano as Go prints it; zero time is "0001-01-01T00:00:00Z".
std::string Rfc3339(int64_t ns) {
  if (ns == 0) return "0001-01-01T00:00:00Z";
  std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%09lld", static_cast<long long>(ns % 1000000000));
  std::string f = frac;
  while (f.back() == '0') f.pop_back();
  if (f != ".") out += f;
  return out + "Z";
}

nlohmann::json Snode(const ServerContext& ctx, const std::string& type, const std::string& url,
                     const std::string& host, const std::string& port) {
  nlohmann::json net = {{"node_ip_addr", host}, {"daemon_port", port}, {"direct_url", url}};
  const std::string& id = ctx.node.daemon_id;
  return {{"daemon_id", id},
          {"daemon_type", type},
          {"flags", 0},
          {"id_digest", XXH64(id.data(), id.size(), 1103515245)},
          {"public_net", net},
          {"intra_control_net", net},
          {"intra_data_net", net}};
}

nlohmann::json BucketJson(const std::string& name) {
  return {{"name", name}, {"provider", "ais"}, {"namespace", {{"uuid", ""}, {"name", ""}}}};
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
  // Kinds that idle (copy-listrange, archive, get-batch, ...) report idle once their work is
  // done, or while a long-lived one waits for more: that is what a client waiting for them polls for.
  const JobKind* jk = FindJobKind(j.kind);
  bool idle = (!j.running() || j.idle) && jk != nullptr && jk->idles;
  nlohmann::json snap = {{"ext", nullptr},
                         {"start-time", Rfc3339(j.start_ns)},
                         {"end-time", Rfc3339(j.end_ns)},
                         {"bck", BucketJson(j.bucket)},
                         {"src-bck", BucketJson(j.bucket)},
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

// The one bucket a job query names: "bck", else the only one of "buckets" ("" = any).
Result<std::string> QueryBucket(const XactMsg& q) {
  AIS_RETURN_IF_ERROR(q.bck.CheckServed("bck"));
  for (const auto& b : q.buckets) AIS_RETURN_IF_ERROR(b.CheckServed("buckets"));
  if (!q.bck.name.empty()) return q.bck.name;
  return q.buckets.size() == 1 ? q.buckets.front().name : std::string();
}

nlohmann::json MountpathList(const Store& store) {
  MountpathState st = store.GetMountpaths();
  return {{"available", st.available}, {"waiting_dd", nlohmann::json::array()}, {"disabled", st.disabled}};
}

// /v1/daemon/mountpaths (AIS api.EnableMountpath & co.): body {"action": "enable-mp", "value": "<path>"}.
// AIS sends enable/disable as POST, attach as PUT and detach as DELETE; any of them is accepted here.
Task<Handled> MountpathAction(ServerContext& ctx, Exchange& ex) {
  if (ex.method() != http::verb::put && ex.method() != http::verb::post && ex.method() != http::verb::delete_) {
    co_return Status::MethodNotAllowed("invalid method " + std::string(ex.method_string()));
  }
  auto msg = co_await ReadActionMsg(ex);
  if (!msg.ok()) co_return msg.status();
  if (!msg->value.is_string() || msg->value.get<std::string>().empty()) {
    co_return Status::InvalidArgument("invalid mountpath value in request: " +
                                                             JsonText(msg->value).substr(0, 256));
  }
  const std::string path = msg->value.get<std::string>();
  Status st;
  if (msg->action == "enable-mp") {
    st = ctx.store.EnableMountpath(path);
  } else if (msg->action == "disable-mp") {
    st = ctx.store.DisableMountpath(path, "disabled by request");
  } else if (msg->action == "attach-mp" || msg->action == "detach-mp") {
    st = Status::NotSupported(msg->action + ": mountpaths are fixed at startup (--mountpath); use enable-mp/disable-mp");
  } else {
    st = Status::InvalidArgument("invalid action \"" + msg->action + "\"");
  }
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

}  // namespace

Task<Handled> HandleHealth(ServerContext& ctx, Exchange& ex) {
  if (ex.method() != http::verb::get && ex.method() != http::verb::head) {
    co_return Status::MethodNotAllowed("invalid method " + std::string(ex.method_string()));
  }
  std::string uptime = std::to_string(NowNs() - ctx.start_ns);
  // Named, not braced in the co_await: GCC 12 cannot keep an initializer_list array across a suspension.
  HeaderList headers = {{hdr::kNodeUptime, uptime}, {hdr::kClusterUptime, uptime}};
  co_return co_await ex.Reply(http::status::ok, headers);
}

Task<Handled> HandleCluster(ServerContext& ctx, Exchange& ex, const Route& route) {
  (void)route;
  if (route.area == "daemon" && route.bucket == "mountpaths") co_return co_await MountpathAction(ctx, ex);
  std::string what = ex.query("what").value_or("");
  if (ex.method() == http::verb::get) {
    if (what == "mountpaths") {
      nlohmann::json out = MountpathList(ctx.store);
      if (route.area == "cluster") out = {{"targets", {{ctx.node.daemon_id, out}}}};
      co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
    }
    if (what == "smap") {
      std::string host_port(ex.header("Host"));
      std::string host = host_port.substr(0, host_port.rfind(':'));
      std::string port = host_port.find(':') == std::string::npos ? "80" : host_port.substr(host_port.rfind(':') + 1);
      std::string url = "http://" + host_port;
      auto self = Snode(ctx, "proxy", url, host, port);
      auto target = Snode(ctx, "target", url, host, port);
      nlohmann::json smap = {{"tmap", {{ctx.node.daemon_id, target}}},
                             {"pmap", {{ctx.node.daemon_id, self}}},
                             {"proxy_si", self},
                             {"uuid", ctx.cluster_uuid},
                             {"creation_time", "2026-01-01 00:00:00"},
                             {"version", "1"}};
      co_return co_await ex.Reply(http::status::ok, {}, JsonText(smap), "application/json");
    }
    if (what == "status" || what == "status_all" || what == "qryxstats" || what == "running_all") {
      auto body = co_await ReadJsonBody(ex);
      if (!body.ok()) co_return body.status();
      auto q = XactMsg::Decode(*body, "");
      if (!q.ok()) co_return q.status();
      auto bucket = QueryBucket(*q);
      if (!bucket.ok()) co_return bucket.status();
      std::string id = q->id, kind = NormalizeJobKind(q->kind);
      if (what == "status") {
        if (id.empty() && kind.empty()) {
          co_return Status::InvalidArgument("job status query requires a job ID or kind");
        }
        auto jobs = ctx.jobs.Query(id, "", *bucket, false);
        if (jobs.empty()) co_return Status::NotFound("job \"" + id + "\" not found");
        if (!kind.empty() && jobs.front().kind != kind) {
          co_return Status::InvalidArgument("kind mismatch: " + kind + " vs " + jobs.front().kind);
        }
        co_return co_await ex.Reply(http::status::ok, {}, JsonText(StatusJson(jobs.front())), "application/json");
      }
      bool running = what == "running_all" || q->show_active.value_or(false);
      auto jobs = ctx.jobs.Query(id, kind, *bucket, running);
      nlohmann::json out = nlohmann::json::array();
      if (what == "qryxstats") {
        if (jobs.empty()) {
          co_return Status::NotFound("\"" + JsonText(*body).substr(0, 512) + "\" not found");
        }
        for (auto& j : jobs) out.push_back(SnapJson(j));
        out = nlohmann::json{{ctx.node.daemon_id, out}};
      } else if (what == "running_all") {
        for (auto& j : jobs) out.push_back(j.kind + "[" + j.id + "]");
      } else {
        for (auto& j : jobs) out.push_back(StatusJson(j));
      }
      co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
    }
    if (what == "node_status") co_return co_await NodeStatus(ctx, ex);
    if (what == "log") co_return co_await NodeLog(ctx, ex);
    co_return Status::InvalidArgument("invalid GET /v1/" + route.area + " query what=\"" + what + "\"");
  }
  if (ex.method() == http::verb::put) {
    auto msg = co_await ReadActionMsg(ex);
    if (!msg.ok()) co_return msg.status();
    if (msg->action == "start") co_return co_await StartJobByKind(ctx, ex, *msg);
    if (msg->action == "stop") {
      auto args = XactMsg::Decode(msg->value, "value");
      if (!args.ok()) co_return args.status();
      auto bucket = QueryBucket(*args);
      if (!bucket.ok()) co_return bucket.status();
      auto jobs = ctx.jobs.Query(args->id, NormalizeJobKind(args->kind), *bucket, true);
      for (auto& j : jobs) ctx.jobs.Abort(j.id);
      co_return co_await ex.Reply(http::status::ok);
    }
    co_return Status::InvalidArgument("invalid action \"" + msg->action + "\"");
  }
  co_return Status::MethodNotAllowed("invalid method " + std::string(ex.method_string()));
}

}  // namespace ais
