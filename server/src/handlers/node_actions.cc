#include "handlers/handlers.h"
#include "handlers/node_actions.h"

#include "auth/authorizer.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "archive/archive_writer.h"
#include "archive/output_sink.h"
#include "handlers/bucket_actions.h"
#include "remote/cache_tier.h"
#include "service/offload.h"
#include "jobs/job_kinds.h"
#include "jobs/maintenance_jobs.h"
#include "jobs/resilver.h"
#include "store/bck.h"
#include "store/bucket_props.h"
#include "store/names.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "metrics/metrics.h"
#include "util/strings.h"

namespace ais {
namespace {

// The operations the AIS tracker names (stats/common.go), and ours they are.
constexpr std::pair<const char*, Op> kTrackedOps[] = {
    {"get", Op::kGet}, {"put", Op::kPut}, {"head", Op::kHead}, {"del", Op::kDelete},
    {"lst", Op::kList}, {"append", Op::kAppend}, {"getbatch", Op::kGetBatch}};

// What the CLI's version check expects of a node (major 5, minor 0: AIS 4.x/5.x API).
constexpr const char* kAisVersion = "5.0.0";
// AIS cos.NodeStateFlags: ClusterStarted | NodeStarted, a healthy node.

// The buckets a job names ("Bck" and "Buckets"); each must be an existing ais:// bucket.
Result<std::vector<std::string>> JobBuckets(Store& store, const XactMsg& args) {
  std::vector<const BucketRef*> refs = {&args.bck};
  for (const auto& b : args.buckets) refs.push_back(&b);
  std::vector<std::string> out;
  for (const BucketRef* ref : refs) {
    AIS_RETURN_IF_ERROR(ref->CheckServed("job bucket"));
    auto key = ref->Key("job bucket");
    if (!key.ok()) return key.status();
    if (key->empty()) continue;
    AIS_RETURN_IF_ERROR(store.GetBucket(*key).status());
    out.push_back(*key);
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

// The address the request came to: the one URL both faces answer at.
struct NodeAddr {
  std::string url, host, port;
};
// With TLS the whole port is HTTPS: the node's URLs (Smap direct_url, primary_url) say so.
NodeAddr AddrOf(const ServerContext& ctx, const Exchange& ex) {
  std::string host_port(ex.header("Host"));
  size_t colon = host_port.rfind(':');
  NodeAddr a;
  a.url = (ctx.tls.enabled() ? "https://" : "http://") + host_port;
  a.host = host_port.substr(0, colon);
  a.port = colon == std::string::npos ? (ctx.tls.enabled() ? "443" : "80") : host_port.substr(colon + 1);
  return a;
}

std::string RoleId(const ServerContext& ctx, NodeRole role) {
  return role == NodeRole::kProxy ? ProxyId(ctx) : ctx.node.daemon_id;
}

nlohmann::json SnodeJson(const ServerContext& ctx, const Exchange& ex, NodeRole role) {
  NodeAddr a = AddrOf(ctx, ex);
  nlohmann::json net = {{"node_ip_addr", a.host}, {"daemon_port", a.port}, {"direct_url", a.url}};
  std::string id = RoleId(ctx, role);
  return {{"daemon_id", id},
          {"daemon_type", role == NodeRole::kProxy ? "proxy" : "target"},
          {"flags", 0},
          {"id_digest", XXH64(id.data(), id.size(), 1103515245)},
          {"public_net", net},
          {"intra_control_net", net},
          {"intra_data_net", net}};
}

// The block device a path's filesystem sits on, as AIS names disks ("sda", "nvme0n1"): the
// partition's parent disk; "" for filesystems on no block device (tmpfs, overlay).
std::string DiskOf(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || major(st.st_dev) == 0) return "";
  std::error_code ec;
  std::filesystem::path sys =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::filesystem::path dev = std::filesystem::canonical(sys, ec);
  if (ec) return "";
  if (std::filesystem::exists(dev / "partition", ec)) dev = dev.parent_path();
  return dev.filename().string();
}

// The filesystem a path is on, from /proc/mounts: the longest mount point above it.
struct FsInfo {
  std::string fs, type;
};
FsInfo FsOf(const std::string& path) {
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type, rest;
  FsInfo best;
  size_t best_len = 0;
  while (in >> dev >> dir >> type && std::getline(in, rest)) {
    bool above = path == dir || dir == "/" || (path.starts_with(dir) && path[dir.size()] == '/');
    if (above && dir.size() >= best_len) {
      best = {dev, type};
      best_len = dir.size();
    }
  }
  return best;
}

// AIS fs.Tcdf: per mountpath capacity (Capacity: AIS's figures), disks and filesystem, and the
// totals; cs_err says when a mountpath is above the high watermark or out of space. `with_paths`
// false: a proxy's (no mountpaths, zeros).
nlohmann::json Tcdf(Store& store, bool with_paths) {
  if (!with_paths) {
    return {{"mountpaths", nullptr}, {"total_used", "0"}, {"total_avail", "0"}, {"pct_max", 0},
            {"pct_avg", 0},          {"pct_min", 0},        {"cs_err", ""}};
  }
  const CapStatus cs = store.capacity().Refresh();  // a query shows the disks as they are now
  nlohmann::json mps = nlohmann::json::object();
  for (const MountpathCapacity& c : cs.mountpaths) {
    const std::string& p = store.mountpaths().path(c.mp);
    std::string disk = DiskOf(p);
    FsInfo fs = FsOf(p);
    mps[p] = {{"used", std::to_string(c.used)},
              {"avail", std::to_string(c.avail)},
              {"pct_used", c.pct_used},
              {"disks", disk.empty() ? nlohmann::json::array() : nlohmann::json::array({disk})},
              {"mountpath_label", ""},
              {"fs",
               {{"Fs", fs.fs},
                {"FsType", fs.type},
                // cos.FsID ([2]int32) marshals as the string "lo,hi" (the CLI decodes no array)
                {"FsID", std::to_string(static_cast<int32_t>(c.fsid & 0xffffffffu)) + "," +
                             std::to_string(static_cast<int32_t>(c.fsid >> 32))}}}};
  }
  return {{"mountpaths", mps},
          {"total_used", std::to_string(cs.total_used)},
          {"total_avail", std::to_string(cs.total_avail)},
          {"pct_max", cs.pct_max},
          {"pct_avg", cs.pct_avg},
          {"pct_min", cs.pct_min},
          {"cs_err", cs.ErrText()}};
}

// AIS cos.NodeStateFlags: healthy, and OOS (256) above out_of_space or LowCapacity (2048) above
// the high watermark.
int64_t NodeStateFlags(Store& store) {
  constexpr int64_t kOos = 256, kLowCapacity = 2048;
  const CapStatus cs = store.capacity().Get();
  return kNodeStateHealthy | (cs.IsOOS() ? kOos : cs.OverHigh() ? kLowCapacity : 0);
}

// Counters of one disk (/sys/block/<d>/stat) and the rates since the previous query of it:
// AIS computes them over its stats interval; here the interval is between two queries (the
// first query of a disk reports zero rates).
struct DiskSample {
  std::chrono::steady_clock::time_point at;
  uint64_t rd_ios = 0, rd_sectors = 0, wr_ios = 0, wr_sectors = 0, io_ms = 0;
};
nlohmann::json DiskRates(const std::string& disk) {
  static std::mutex mu;
  static std::map<std::string, DiskSample> prev;  // guarded by mu
  std::ifstream in("/sys/block/" + disk + "/stat");
  uint64_t f[11] = {};
  for (auto& x : f) in >> x;
  DiskSample now{std::chrono::steady_clock::now(), f[0], f[2], f[4], f[6], f[9]};
  int64_t rbps = 0, ravg = 0, wbps = 0, wavg = 0, util = 0;
  {
    std::lock_guard lock(mu);
    auto it = prev.find(disk);
    if (in && it != prev.end()) {
      const DiskSample& p = it->second;
      double secs = std::chrono::duration<double>(now.at - p.at).count();
      if (secs > 0) {
        uint64_t rb = (now.rd_sectors - p.rd_sectors) * 512, wb = (now.wr_sectors - p.wr_sectors) * 512;
        uint64_t ri = now.rd_ios - p.rd_ios, wi = now.wr_ios - p.wr_ios;
        rbps = static_cast<int64_t>(static_cast<double>(rb) / secs);
        wbps = static_cast<int64_t>(static_cast<double>(wb) / secs);
        ravg = ri ? static_cast<int64_t>(rb / ri) : 0;
        wavg = wi ? static_cast<int64_t>(wb / wi) : 0;
        util = std::min<int64_t>(100, static_cast<int64_t>(static_cast<double>(now.io_ms - p.io_ms) / (secs * 10)));
      }
    }
    if (in) prev[disk] = now;
  }
  return {{"RBps", rbps}, {"Ravg", ravg}, {"WBps", wbps}, {"Wavg", wavg}, {"Util", util}};
}

// AIS TcdfExt (what=disk): the Tcdf keys and "AllDiskStats" by disk.
nlohmann::json DiskStatsJson(Store& store) {
  nlohmann::json out = Tcdf(store, true);
  nlohmann::json all = nlohmann::json::object();
  for (const auto& [mp, cdf] : out["mountpaths"].items()) {
    for (const auto& d : cdf["disks"]) all[d.get<std::string>()] = DiskRates(d.get<std::string>());
  }
  out["AllDiskStats"] = all;
  return out;
}

std::map<std::string, uint64_t> ReadMeminfo() {
  std::map<std::string, uint64_t> kb;
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t v = 0;
  while (in >> key >> v) {
    std::getline(in, unit);
    if (!key.empty() && key.back() == ':') key.pop_back();
    kb[key] = v * 1024;
  }
  return kb;
}

// AIS apc.MemCPUInfo of this process; a target's adds its mountpaths' capacity.
nlohmann::json MemCpuInfo(Store& store, NodeRole role) {
  auto m = ReadMeminfo();
  uint64_t total = m["MemTotal"], free = m["MemFree"], buff = m["Buffers"] + m["Cached"];
  uint64_t actual_free = m.count("MemAvailable") ? m["MemAvailable"] : free + buff;
  long page = ::sysconf(_SC_PAGESIZE), ticks = ::sysconf(_SC_CLK_TCK), ncpu = ::sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t size = 0, resident = 0, share = 0;
  {
    std::ifstream statm("/proc/self/statm");
    statm >> size >> resident >> share;
    size *= static_cast<uint64_t>(page);
    resident *= static_cast<uint64_t>(page);
    share *= static_cast<uint64_t>(page);
  }
  uint64_t utime = 0, stime = 0;
  {
    std::ifstream stat("/proc/self/stat");
    std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream rest(all.substr(all.rfind(')') + 2));  // fields from the 3rd on
    std::string field;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
  }
  uint64_t user_ms = utime * 1000 / static_cast<uint64_t>(ticks > 0 ? ticks : 100);
  uint64_t sys_ms = stime * 1000 / static_cast<uint64_t>(ticks > 0 ? ticks : 100);
  double load[3] = {0, 0, 0};
  (void)::getloadavg(load, 3);
  double cpus = static_cast<double>(ncpu > 0 ? ncpu : 1);
  int64_t cpu_util = std::min<int64_t>(100, static_cast<int64_t>(load[0] * 100 / cpus));
  nlohmann::json info = {
      {"mem_used", resident},
      {"mem_avail", actual_free},
      {"pct_mem_used", total ? static_cast<double>(resident) * 100 / static_cast<double>(total) : 0.0},
      {"pct_cpu_used", 0.0},
      {"load_avg", {{"One", load[0]}, {"Five", load[1]}, {"Fifteen", load[2]}}},
      {"cpu_util", cpu_util},
      {"mem",
       {{"Total", total},
        {"Used", total - free},
        {"Free", free},
        {"BuffCache", buff},
        {"ActualFree", actual_free},
        {"ActualUsed", total - actual_free},
        {"SwapTotal", m["SwapTotal"]},
        {"SwapFree", m["SwapFree"]},
        {"SwapUsed", m["SwapTotal"] - m["SwapFree"]}}},
      {"proc",
       {{"CPU",
         {{"User", user_ms}, {"System", sys_ms}, {"Total", user_ms + sys_ms}, {"LastTime", NowNs() / 1000000},
          {"Percent", 0.0}}},
        {"Mem", {{"Size", size}, {"Resident", resident}, {"Share", share}}}}},
  };
  if (role == NodeRole::kTarget) {
    nlohmann::json tcdf = Tcdf(store, true);
    uint64_t used = std::stoull(tcdf["total_used"].get<std::string>());
    uint64_t avail = std::stoull(tcdf["total_avail"].get<std::string>());
    info["fs_used"] = std::to_string(used);
    info["fs_capacity"] = std::to_string(used + avail);
    info["pct_fs_used"] = used + avail ? static_cast<double>(used) * 100 / static_cast<double>(used + avail) : 0.0;
  }
  return info;
}

// AIS stats tracker: {metric: int64}, counters that are zero left out (as AIS does); the same
// figures as GET /metrics.
nlohmann::json Tracker(const ServerContext& ctx, NodeRole role) {
  nlohmann::json t = nlohmann::json::object();
  auto put = [&t](const std::string& name, uint64_t v) {
    if (v != 0) t[name] = static_cast<int64_t>(v);
  };
  if (role == NodeRole::kTarget) {
    const Metrics& m = ServerMetrics();
    for (const auto& [name, op] : kTrackedOps) {
      const OpFigures& f = m.op(op);
      put(std::string(name) + ".n", f.count.load(std::memory_order_relaxed));
      put("err." + std::string(name) + ".n", f.errors.load(std::memory_order_relaxed));
      put(std::string(name) + ".ns.total", f.ns_total.load(std::memory_order_relaxed));
      if (op == Op::kGet || op == Op::kPut || op == Op::kAppend) {
        put(std::string(name) + ".size", f.bytes.load(std::memory_order_relaxed));
      }
    }
  }
  if (role == NodeRole::kTarget) {
    put("lru.evict.n", ctx.store.capacity().evicted_objects());
    put("lru.evict.size", ctx.store.capacity().evicted_bytes());
  }
  t["up.ns.time"] = NowNs() - ctx.start_ns;
  t["state.flags"] = NodeStateFlags(ctx.store);
  return t;
}

// AIS what=metrics: the name and kind of each metric the tracker may report.
nlohmann::json MetricNames(const Store& store, NodeRole role) {
  nlohmann::json m = {{"up.ns.time", "special"}, {"state.flags", "gauge"}};
  if (role == NodeRole::kProxy) return m;
  for (const auto& [name, op] : kTrackedOps) {
    m[std::string(name) + ".n"] = "counter";
    m["err." + std::string(name) + ".n"] = "counter";
    m[std::string(name) + ".ns.total"] = "total";
    if (op == Op::kGet || op == Op::kPut || op == Op::kAppend) m[std::string(name) + ".size"] = "size";
  }
  m["lru.evict.n"] = "counter";
  m["lru.evict.size"] = "size";
  std::set<std::string> disks;
  for (const auto& p : store.mountpaths().Attached()) {
    if (std::string d = DiskOf(p); !d.empty()) disks.insert(d);
  }
  for (const auto& d : disks) {
    m["disk." + d + ".read.bps"] = "compbw";
    m["disk." + d + ".write.bps"] = "compbw";
    m["disk." + d + ".avg.rsize"] = "gauge";
    m["disk." + d + ".avg.wsize"] = "gauge";
    m["disk." + d + ".util"] = "gauge";
  }
  return m;
}

// AIS cos.NodeStateInfo: the cluster as this node sees it.
nlohmann::json ClusterState(const ServerContext& ctx, const Exchange& ex) {
  NodeAddr a = AddrOf(ctx, ex);
  return {{"smap",
           {{"Primary", {{"pub_url", a.url}, {"control_url", a.url}, {"id", ProxyId(ctx)}}},
            {"version", "1"},
            {"uuid", ctx.cluster_uuid}}},
          {"bmd", {{"uuid", ctx.cluster_uuid}, {"version", "1"}}},
          {"rmd", {{"version", "0"}}},
          {"config", {{"version", "1"}}},
          {"etlmd", {{"version", "0"}}},
          {"flags", NodeStateFlags(ctx.store)}};
}

// AIS stats.NodeStatus.
nlohmann::json NodeStatusJson(ServerContext& ctx, const Exchange& ex, NodeRole role) {
  return {{"status", ""},
          {"deployment", "dev"},
          {"ais_version", kAisVersion},
          {"build_time", ""},
          {"k8s_pod_name", ""},
          {"snode", SnodeJson(ctx, ex, role)},
          {"tracker", Tracker(ctx, role)},
          {"capacity", Tcdf(ctx.store, role == NodeRole::kTarget)},
          {"cluster", ClusterState(ctx, ex)},
          {"sys_info", MemCpuInfo(ctx.store, role)},
          {"smap_version", "1"}};
}

// AIS stats.Node (what=node_stats).
nlohmann::json NodeStatsJson(ServerContext& ctx, const Exchange& ex, NodeRole role) {
  return {{"snode", SnodeJson(ctx, ex, role)},
          {"tracker", Tracker(ctx, role)},
          {"capacity", Tcdf(ctx.store, role == NodeRole::kTarget)}};
}

// A node's config: the cluster's, and the node-local sections.
nlohmann::json NodeConfigJson(const ServerContext& ctx, const Exchange& ex, NodeRole role) {
  nlohmann::json c = ClusterConfigJson(ctx, ex);
  NodeAddr a = AddrOf(ctx, ex);
  nlohmann::json paths = nlohmann::json::object();
  if (role == NodeRole::kTarget) {
    for (const auto& p : ctx.store.mountpaths().Attached()) paths[p] = "";
  }
  c["fspaths"] = {{"paths", paths}};
  c["confdir"] = "";
  c["log_dir"] = "";
  c["test_fspaths"] = {{"root", ""}, {"count", 0}, {"instance", 0}};
  c["host_net"] = {{"hostname", a.host},
                   {"hostname_intra_control", ""},
                   {"hostname_intra_data", ""},
                   {"port", a.port},
                   {"port_intra_control", "0"},
                   {"port_intra_data", "0"}};
  return c;
}

}  // namespace

Task<Handled> ReplyJson(Exchange& ex, const nlohmann::json& out) {
  co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
}

std::string ProxyId(const ServerContext& ctx) { return "p" + ctx.node.daemon_id; }

nlohmann::json SmapJson(const ServerContext& ctx, const Exchange& ex) {
  nlohmann::json proxy = SnodeJson(ctx, ex, NodeRole::kProxy);
  return {{"tmap", {{ctx.node.daemon_id, SnodeJson(ctx, ex, NodeRole::kTarget)}}},
          {"pmap", {{ProxyId(ctx), proxy}}},
          {"proxy_si", proxy},
          {"uuid", ctx.cluster_uuid},
          {"creation_time", "2026-01-01 00:00:00"},
          {"version", "1"}};
}

nlohmann::json ClusterConfigJson(const ServerContext& ctx, const Exchange& ex) {
  // The bucket sections are the defaults every new bucket gets.
  const SpaceConfig space = ctx.store.capacity().config();
  nlohmann::json bprops = BucketProps{}.ToAisJson("", space);
  NodeAddr a = AddrOf(ctx, ex);
  auto section = [] { return nlohmann::json::object(); };
  nlohmann::json backends = section();  // the cloud providers served, each with an (empty) section
  if (ctx.remote.aws_enabled()) backends[std::string(kProviderAws)] = section();
  if (ctx.remote.CheckEnabled(kProviderGcp).ok()) backends[std::string(kProviderGcp)] = section();
  if (ctx.remote.CheckEnabled(kProviderAzure).ok()) backends[std::string(kProviderAzure)] = section();
  if (ctx.remote.ais_clusters().size() > 0) backends[std::string(kProviderAis)] = ctx.remote.ais_clusters().ConfigJson();
  return {
      {"write_policy", bprops["write_policy"]},
      {"checksum", bprops["checksum"]},
      {"tcb", section()},
      {"tco", section()},
      {"arch", section()},
      {"lso", section()},
      {"rate_limit", section()},
      {"keepalivetracker", section()},
      {"rebalance", {{"enabled", false}}},  // one target: nothing to move
      // log.level: AIS's default verbosity "3" while every line is kept, else the level set.
      {"log", {{"level", ServerLog().level() == LogSeverity::kInfo ? "3" : std::string(LogLevelName(ServerLog().level()))}}},
      {"ec", bprops["ec"]},
      {"get_batch", section()},
      {"space", space.SpaceJson()},
      {"transport", section()},
      {"disk",
       {{"disk_util_low_wm", 20},
        {"disk_util_high_wm", 80},
        {"disk_util_max_wm", 95},
        {"iostat_time_long", "2s"},
        {"iostat_time_short", "100ms"}}},
      {"fshc", {{"enabled", true}}},
      {"chunks", bprops["chunks"]},
      {"lru", space.LruJson()},
      {"mirror", bprops["mirror"]},
      {"periodic", {{"stats_time", "10s"}, {"notif_time", "30s"}, {"retry_sync_time", "2s"}}},
      {"client", {{"client_timeout", "10s"}, {"client_long_timeout", "30m"}, {"list_timeout", "10m"}}},
      {"downloader", section()},
      {"auth", ctx.auth ? ctx.auth->ConfigJson() : nlohmann::json{{"client_auth_required", false}}},
      {"backend", backends},
      {"uuid", ctx.cluster_uuid},
      {"lastupdate_time", ""},
      {"proxy", {{"primary_url", a.url}, {"original_url", a.url}, {"discovery_url", ""}, {"non_electable", false}}},
      {"net",
       {{"l4", {{"proto", "tcp"}}},
        {"http",
         {{"use_https", ctx.tls.enabled()},
          {"server_crt", ctx.tls.cert_file},
          {"server_key", ctx.tls.key_file},
          {"domain_tls", ""},
          {"client_ca_tls", ctx.tls.client_ca_file},
          {"client_auth_tls", ClientAuthTls(ctx.tls)},
          {"skip_verify", false},
          {"chunked_transfer", false}}}}},
      {"timeout",
       {{"cplane_operation", "2s"},
        {"max_keepalive", "4s"},
        {"max_host_busy", "20s"},
        {"startup_time", "1m"},
        {"send_file_time", "5m"}}},
      {"memsys", section()},
      {"features", std::to_string(ctx.features.load(std::memory_order_relaxed))},
      {"config_version", "1"},
      {"versioning", bprops["versioning"]},
      {"resilver", {{"enabled", true}}},
  };
}

nlohmann::json ClusterNodeStatsJson(ServerContext& ctx, const Exchange& ex) {
  return {{"proxy", NodeStatsJson(ctx, ex, NodeRole::kProxy)},
          {"target", {{ctx.node.daemon_id, NodeStatsJson(ctx, ex, NodeRole::kTarget)}}}};
}

nlohmann::json ClusterSysinfoJson(ServerContext& ctx) {
  return {{"proxy", nlohmann::json::object()},
          {"target", {{ctx.node.daemon_id, MemCpuInfo(ctx.store, NodeRole::kTarget)}}}};
}

nlohmann::json MountpathListJson(const Store& store) {
  MountpathState st = store.GetMountpaths();
  return {{"available", st.available}, {"waiting_dd", st.waiting_dd}, {"disabled", st.disabled}};
}

// meta.BMD: provider -> namespace ("@#", the global one) -> bucket name -> props. A remote
// bucket is under its provider by its name ("aws" -> "b" for the key "aws/b"), as the CLI looks
// it up (`ais ls s3 --all` marks the buckets it finds there present).
nlohmann::json BmdJson(ServerContext& ctx) {
  nlohmann::json providers = {{std::string(kProviderAis), {{"@#", nlohmann::json::object()}}}};
  for (const auto& key : ctx.store.buckets().Names()) {
    if (auto props = ctx.store.GetBucket(key); props.ok()) {
      providers[std::string(KeyProvider(key))][KeyNs(key).Uname()][std::string(KeyName(key))] =
          props->ToAisJson(key, ctx.store.capacity().config());
    }
  }
  return {{"providers", std::move(providers)}, {"uuid", ctx.cluster_uuid}, {"version", "1"}};
}

Task<Handled> StartJobByKind(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto args = XactMsg::Decode(call.msg.value, "value");
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
  } else if (kind == "cleanup-store") {
    fn = [&store](JobControl& jc) { return RunCleanup(store, jc); };
  } else if (kind == "scrub") {
    fn = [&store, b = *buckets](JobControl& jc) { return RunScrub(store, jc, b); };
  } else if (kind == "load-lom-cache") {
    fn = [&store, b = *buckets](JobControl& jc) { return RunWarmup(store, jc, b); };
  } else if (kind == "make-n-copies") {  // to the bucket's mirror.copies
    if (buckets->size() != 1) co_return Status::InvalidArgument("make-n-copies: expecting exactly one bucket");
    auto props = store.GetBucket(buckets->front());
    if (!props.ok()) co_return props.status();
    fn = [&store, b = buckets->front(), n = props->copies()](JobControl& jc) { return RunMakeNCopies(store, jc, b, n); };
  } else if (kind == "resilver" && ctx.resilver != nullptr) {  // the real one (jobs/resilver.h)
    co_return co_await ex.Reply(http::status::ok, {}, ctx.resilver->Start(), "text/plain");
  } else if (kind == "rebalance" || kind == "resilver") {
    fn = [](JobControl&) { return Status::OK(); };  // one node, one target: nothing to move across nodes
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

Task<Handled> QuerySmap(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ReplyJson(ex, SmapJson(ctx, ex));
}

Task<Handled> QueryBmd(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  co_return co_await ReplyJson(ex, BmdJson(ctx));
}

Task<Handled> QueryNodeConfig(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, NodeConfigJson(ctx, ex, call.role));
}

Task<Handled> QuerySnode(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, SnodeJson(ctx, ex, call.role));
}

Task<Handled> QueryNodeStatus(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, NodeStatusJson(ctx, ex, call.role));
}

Task<Handled> QueryNodeStats(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, NodeStatsJson(ctx, ex, call.role));
}

Task<Handled> QueryMetricNames(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, MetricNames(ctx.store, call.role));
}

Task<Handled> QuerySysinfo(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await ReplyJson(ex, MemCpuInfo(ctx.store, call.role));
}

Task<Handled> QuerySoftwareVersion(ServerContext&, Exchange& ex, const ApiCall&) {
  co_return co_await ex.Reply(http::status::ok, {}, kAisVersion, "text/plain; charset=utf-8");
}

Task<Handled> QueryTlsCertificate(ServerContext&, Exchange&, const ApiCall&) {
  co_return Status::NotFound("no TLS certificate: this node serves plain HTTP");
}

namespace {

// A query only a target answers (the proxy face answers it as AIS's proxy does: unrecognized).
Status TargetOnly(const Exchange& ex, const ApiCall& call) {
  if (call.role == NodeRole::kTarget) return Status::OK();
  return Status::InvalidArgument("invalid '/v1/daemon' request: unrecognized 'what=" +
                                 ex.query("what").value_or("").substr(0, 64) + "' query");
}

}  // namespace

Task<Handled> QueryNodeMountpaths(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = TargetOnly(ex, call); !st.ok()) co_return st;
  co_return co_await ReplyJson(ex, MountpathListJson(ctx.store));
}

Task<Handled> QueryDisks(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = TargetOnly(ex, call); !st.ok()) co_return st;
  co_return co_await ReplyJson(ex, DiskStatsJson(ctx.store));
}

Task<Handled> QueryNodeRemote(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = TargetOnly(ex, call); !st.ok()) co_return st;
  std::function<Result<nlohmann::json>()> show = [&tier = ctx.remote] {
    return Result<nlohmann::json>(RemoteClustersJson(tier.ais_clusters()));
  };
  auto out = co_await Offload<nlohmann::json>(ctx.remote.pool(), std::move(show));  // probes each
  if (!out.ok()) co_return out.status();
  co_return co_await ReplyJson(ex, *out);
}

nlohmann::json RemoteClustersJson(AisClusters& clusters) {
  nlohmann::json a = nlohmann::json::array();
  for (auto& c : clusters.Show()) {
    if (c.smap.is_null()) {  // configured, never reached (or not now): as AIS shows a defunct one
      a.push_back({{"smap", nullptr}, {"url", "[" + c.url + "]"}, {"alias", c.alias}, {"uuid", "defunct"}});
    } else {
      a.push_back({{"smap", c.smap}, {"url", c.url}, {"alias", c.alias}, {"uuid", c.uuid}});
    }
  }
  return {{"a", a.empty() ? nlohmann::json(nullptr) : a}, {"ver", clusters.version()}};
}

// ?severity=info|warning|error, ?all=true: the log as text, or (all) as .tar.gz.
Task<Handled> QueryLog(ServerContext& ctx, Exchange& ex, const ApiCall&) {
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

}  // namespace ais
