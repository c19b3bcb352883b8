#include "handlers/node_actions.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "archive/archive_writer.h"
#include "archive/output_sink.h"
#include "handlers/bucket_actions.h"
#include "jobs/job_kinds.h"
#include "jobs/maintenance_jobs.h"
#include "store/names.h"
#include "util/file.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/node_stats.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kVersion = "0.1.0";

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The buckets a job names ("Bck" and "Buckets"); each must be an existing ais:// bucket.
Result<std::vector<std::string>> JobBuckets(Store& store, const XactMsg& args) {
  std::vector<const BucketRef*> refs = {&args.bck};
  for (const auto& b : args.buckets) refs.push_back(&b);
  std::vector<std::string> out;
  for (const BucketRef* ref : refs) {
    AIS_RETURN_IF_ERROR(ref->CheckServed("job bucket"));
    if (ref->name.empty()) continue;
    AIS_RETURN_IF_ERROR(ValidateBucketName(ref->name));
    AIS_RETURN_IF_ERROR(store.GetBucket(ref->name).status());
    out.push_back(ref->name);
  }
  return out;
}

class StringSink : public OutputSink {
 public:
  Status Append(const void* data, size_t len) override {
    out.append(static_cast<const char*>(data), len);
    return Status::OK();
  }
  Status AppendFile(const FileSegment& seg, std::shared_ptr<const void>) override {
    size_t at = out.size();
    out.resize(at + seg.len);
    return ReadSegments({seg}, out.data() + at);
  }
  std::string out;
};

std::string SeverityName(LogSeverity s) {
  switch (s) {
    case LogSeverity::kInfo: return "INFO";
    case LogSeverity::kWarning: return "WARNING";
    case LogSeverity::kError: return "ERROR";
  }
  return "INFO";
}

nlohmann::json Capacity(const Store& store) {
  nlohmann::json cap = nlohmann::json::object();
  for (const auto& p : store.mountpaths().paths()) {
    struct statvfs v{};
    if (::statvfs(p.c_str(), &v) != 0) continue;
    uint64_t total = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
    uint64_t avail = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
    uint64_t used = total - static_cast<uint64_t>(v.f_bfree) * v.f_frsize;
    cap[p] = {{"used", std::to_string(used)},
              {"avail", std::to_string(avail)},
              {"pct_used", total ? (used * 100 + total / 2) / total : 0},
              {"disks", nlohmann::json::array()},
              {"mountpath", p}};
  }
  return cap;
}

}  // namespace

Task<Handled> StartJobByKind(ServerContext& ctx, Exchange& ex, const ActionMsg& msg) {
  auto args = XactMsg::Decode(msg.value, "value");
  if (!args.ok()) co_return args.status();
  const std::string& given = args->kind;
  if (given.empty()) co_return Status::InvalidArgument("start: missing job kind");
  const JobKind* jk = FindJobKind(given);
  if (!jk) co_return Status::InvalidArgument("not found xaction \"" + given + "\"");
  if (!jk->startable) {
    co_return Status::InvalidArgument(
        "xaction \"" + given + "\" cannot be started this way (use the API call that creates it)");
  }
  auto buckets = JobBuckets(ctx.store, *args);
  if (!buckets.ok()) co_return buckets.status();
  Store& store = ctx.store;
  std::string kind(jk->kind);
  std::string scope = buckets->size() == 1 ? buckets->front() : "";
  std::function<Status(JobControl&)> fn;
  if (kind == "lru") {
    fn = [&store, b = *buckets](JobControl& jc) { return RunLru(store, jc, b); };
  } else if (kind == "cleanup") {
    fn = [&store](JobControl& jc) { return RunCleanup(store, jc); };
  } else if (kind == "scrub") {
    fn = [&store, b = *buckets](JobControl& jc) { return RunScrub(store, jc, b); };
  } else if (kind == "load-lom-cache") {
    fn = [&store, b = *buckets](JobControl& jc) { return RunWarmup(store, jc, b); };
  } else if (kind == "rebalance" || kind == "resilver") {
    fn = [](JobControl&) { return Status::OK(); };  // one node, one target: nothing to move
  } else if (kind == "rechunk") {
    if (buckets->size() != 1) {
      co_return Status::InvalidArgument("rechunk: expecting exactly one bucket");
    }
    nlohmann::json from_props = nlohmann::json::object();  // chunk sizes come from the bucket's props
    co_return co_await StartRechunkJob(ctx, ex, buckets->front(), from_props);
  } else {
    co_return Status::NotSupported(
        "xaction \"" + given + "\" needs a remote backend or storage service this single-node server does not have");
  }
  JobOptions opts;
  opts.ctlmsg = scope.empty() ? "all buckets" : "ais://" + scope;
  std::string id = ctx.jobs.Start(kind, scope, std::move(fn), std::move(opts));
  co_return co_await ex.Reply(http::status::ok, {}, id, "text/plain");
}

Task<Handled> NodeStatus(ServerContext& ctx, Exchange& ex) {
  NodeStats& st = ServerStats();
  auto v = [](int64_t x) { return nlohmann::json{{"v", std::to_string(x)}}; };
  int64_t uptime = NowNs() - ctx.start_ns;
  nlohmann::json tracker = {
      {"get.n", v(st.get_n.load())},       {"put.n", v(st.put_n.load())},
      {"put.size", v(st.put_size.load())}, {"head.n", v(st.head_n.load())},
      {"del.n", v(st.del_n.load())},       {"lst.n", v(st.lst_n.load())},
      {"up.ns.time", v(uptime)},
  };
  long ncpu = ::sysconf(_SC_NPROCESSORS_ONLN);
  double load[3] = {0, 0, 0};
  (void)::getloadavg(load, 3);
  auto running = ctx.jobs.Query("", "", "", true);
  nlohmann::json status = {
      {"snode", {{"daemon_id", ctx.node.daemon_id}, {"daemon_type", "target"}}},
      {"tracker", tracker},
      {"capacity", Capacity(ctx.store)},
      {"status", "online"},
      {"deployment", "dev"},
      {"ais_version", kVersion},
      {"build_time", ""},
      {"k8s_pod_name", ""},
      {"smap_version", "1"},
      {"cluster_uuid", ctx.cluster_uuid},
      {"running_jobs", running.size()},
      {"log_lines", ServerLog().total_lines()},
      {"sys_info",
       {{"cpus", ncpu > 0 ? ncpu : 1},
        {"load_avg", {{"one", load[0]}, {"five", load[1]}, {"fifteen", load[2]}}}}},
  };
  co_return co_await ex.Reply(http::status::ok, {}, JsonText(status), "application/json");
}

Task<Handled> NodeLog(ServerContext& ctx, Exchange& ex) {
  LogSeverity sev;
  std::string given = ex.query("severity").value_or("");
  if (!ParseLogSeverity(given, &sev)) {
    co_return Status::InvalidArgument("invalid log severity \"" + given +
                                                             "\" (expecting info, warning or error)");
  }
  std::string text = ServerLog().Text(sev);
  if (!IEquals(ex.query("all").value_or(""), "true")) {
    co_return co_await ex.Reply(http::status::ok, {}, std::move(text), "text/plain; charset=utf-8");
  }
  StringSink sink;
  auto w = ArchiveWriter::Create(ArchiveFormat::kTgz, &sink);
  if (!w.ok()) co_return w.status();
  std::string name = "aisnode." + ctx.node.daemon_id + ".log." + SeverityName(sev);
  Status st = (*w)->BeginEntry(name, text.size(), NowNs() / 1000000000);
  if (st.ok()) st = (*w)->Write(text.data(), text.size());
  if (st.ok()) st = (*w)->EndEntry();
  if (st.ok()) st = (*w)->Finish();
  if (!st.ok()) co_return st;
  w->reset();
  co_return co_await ex.Reply(http::status::ok, {}, std::move(sink.out), "application/gzip");
}

Task<Handled> HandleReverse(ServerContext& ctx, Exchange& ex, const Route& route) {
  std::string node(ex.header("Ais-Node-Id"));
  if (node.empty()) co_return Status::InvalidArgument("missing node ID");
  if (node != ctx.node.daemon_id) {
    co_return Status::NotFound("node \"" + node + "\" does not exist (cluster map has t[" +
                                                      ctx.node.daemon_id + "], p[" + ctx.node.daemon_id + "])");
  }
  if (route.bucket != "daemon") {
    co_return Status::NotFound("invalid URL path \"" + std::string(ex.raw_path()) + "\"");
  }
  Route daemon;
  daemon.area = "daemon";
  daemon.bucket = route.object;  // /v1/reverse/daemon/mountpaths
  co_return co_await HandleCluster(ctx, ex, daemon);
}

}  // namespace ais
