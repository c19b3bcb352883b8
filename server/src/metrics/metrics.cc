#include "metrics/metrics.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <limits>
#include <sstream>

namespace ais {
namespace {

constexpr const char* kPrefix = "ais_target_";

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct OpNames {
  const char* name;   // AIS's: get, put, head, del, lst, append, getbatch
  const char* label;  // our op label for the families AIS does not have
  bool bytes;         // whether AIS exports <name>_bytes
  bool ns_total;      // whether AIS exports <name>_ns_total
};
constexpr std::array<OpNames, kNumOps> kOps = {{
    {"get", "get", true, true},
    {"put", "put", true, true},
    {"head", "head", false, true},
    {"del", "delete", false, false},
    {"lst", "list", false, false},
    {"append", "append", true, false},
    {"getbatch", "getbatch", false, false},  // (its object bytes: getbatch_obj_bytes, counted per item)
    {"other", "other", false, false},
}};

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

class Families {
 public:
  explicit Families(std::string node_id) : node_id_(std::move(node_id)) {}

  // One sample of family `name` (created on first use) with labels {node_id, extra...}.
  ClientMetric& Sample(const std::string& name, MetricType type, const std::string& help,
                       std::vector<ClientMetric::Label> extra = {}) {
    MetricFamily* f = nullptr;
    for (auto& fam : families_) {
      if (fam.name == name) f = &fam;
    }
    if (f == nullptr) {
      families_.push_back(MetricFamily{name, help, type, {}});
      f = &families_.back();
    }
    ClientMetric m;
    m.label = std::move(extra);
    m.label.push_back({"node_id", node_id_});
    f->metric.push_back(std::move(m));
    return f->metric.back();
  }
  void Counter(const std::string& name, const std::string& help, double v, std::vector<ClientMetric::Label> l = {}) {
    Sample(kPrefix + name, MetricType::Counter, help, std::move(l)).counter.value = v;
  }
  void Gauge(const std::string& name, const std::string& help, double v, std::vector<ClientMetric::Label> l = {}) {
    Sample(kPrefix + name, MetricType::Gauge, help, std::move(l)).gauge.value = v;
  }
  std::vector<MetricFamily>& all() { return families_; }

 private:
  const std::string node_id_;
  std::vector<MetricFamily> families_;
};

}  // namespace

void Metrics::Count(Op op, unsigned status, uint64_t bytes) {
  if (!enabled()) return;
  OpFigures& f = ops_[static_cast<size_t>(op)];
  f.count.fetch_add(1, std::memory_order_relaxed);
  if (status >= 400) f.errors.fetch_add(1, std::memory_order_relaxed);
  if (bytes) f.bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void Metrics::RecordLatency(Op op, uint64_t ns) {
  if (!enabled()) return;
  OpFigures& f = ops_[static_cast<size_t>(op)];
  f.ns_total.fetch_add(ns, std::memory_order_relaxed);
  const double secs = static_cast<double>(ns) / 1e9;
  size_t b = 0;
  while (b < kLatencyBuckets.size() && secs > kLatencyBuckets[b]) ++b;
  f.latency[b].fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::Exposition(const std::string& node_id, const MetricsSnapshot& snap) const {
  // AIS spells the node id with '_' for '.' in labels.
  std::string id = node_id;
  for (char& c : id) c = c == '.' ? '_' : c;
  Families out(id);
  const std::vector<ClientMetric::Label> no_bucket = {{"bucket", ""}};
  for (size_t i = 0; i < kNumOps; ++i) {
    const OpNames& n = kOps[i];
    const OpFigures& f = ops_[i];
    if (i != static_cast<size_t>(Op::kOther)) {
      auto labels = no_bucket;
      if (i == static_cast<size_t>(Op::kPut)) labels.push_back({"xkind", ""});  // AIS: PUTs by job kind, "" for users
      if (i == static_cast<size_t>(Op::kGetBatch)) labels.clear();  // GetBatch families: node_id only
      out.Counter(std::string(n.name) + "_count", std::string("requests: ") + n.label, static_cast<double>(Load(f.count)),
                  labels);
      out.Counter(std::string("err_") + n.name + "_count", std::string("failed requests: ") + n.label,
                  static_cast<double>(Load(f.errors)), labels);
      if (n.bytes) {
        out.Counter(std::string(n.name) + "_bytes",
                    std::string("object bytes: ") + n.label, static_cast<double>(Load(f.bytes)), labels);
      }
      if (n.ns_total) {
        out.Counter(std::string(n.name) + "_ns_total", std::string("summed latency (ns): ") + n.label,
                    static_cast<double>(Load(f.ns_total)), labels);
      }
    }
    // Ours: the latency distribution per operation.
    ClientMetric& h = out.Sample(std::string(kPrefix) + "request_latency_seconds", MetricType::Histogram,
                                 "request latency by operation", {{"op", n.label}});
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kLatencyBuckets.size(); ++b) {
      cumulative += Load(f.latency[b]);
      h.histogram.bucket.push_back({cumulative, kLatencyBuckets[b]});
    }
    cumulative += Load(f.latency[kLatencyBuckets.size()]);
    h.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    h.histogram.sample_count = cumulative;
    h.histogram.sample_sum = static_cast<double>(Load(f.ns_total)) / 1e9;
  }
  out.Counter("get_range_count", "range GETs (a part of get_count)", static_cast<double>(Load(range_gets_)));
  out.Counter("get_cold_count", "cold GETs: objects fetched from a remote bucket's backend",
              static_cast<double>(Load(cold_gets_)));
  out.Counter("get_cold_bytes", "bytes fetched by cold GETs", static_cast<double>(Load(cold_bytes_)));
  out.Counter("getbatch_obj_count", "GetBatch items served", static_cast<double>(Load(batch_items_)));
  out.Counter("getbatch_obj_bytes", "bytes of the GetBatch items served", static_cast<double>(Load(batch_item_bytes_)));
  out.Gauge("requests_in_flight", "requests being served", static_cast<double>(in_flight_.load()));
  out.Gauge("connections_open", "open client connections", static_cast<double>(snap.connections));
  out.Gauge("uptime", "seconds since the node started", static_cast<double>(snap.uptime_ns) / 1e9);
  out.Gauge("state_flags", "node state bits (AIS cos.NodeStateFlags; 6: healthy)",
            static_cast<double>(snap.state_flags));
  if (snap.access_log) {
    out.Counter("access_log_lines_count", "access log lines written", static_cast<double>(snap.access_log_lines));
    out.Counter("access_log_dropped_count", "access log entries dropped (the writer's queue was full)",
                static_cast<double>(snap.access_log_dropped));
  }
  for (const auto& mp : snap.mountpaths) {
    out.Gauge("mountpath_capacity_bytes", "filesystem size under a mountpath", static_cast<double>(mp.capacity),
              {{"mountpath", mp.path}});
    out.Gauge("mountpath_used_bytes", "filesystem bytes used under a mountpath", static_cast<double>(mp.used),
              {{"mountpath", mp.path}});
  }
  for (const auto& j : snap.jobs) {
    out.Gauge("jobs", "jobs (AIS xactions) by kind and state", static_cast<double>(j.count),
              {{"xkind", j.kind}, {"state", j.state}});
  }
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, out.all());
  return text.str();
}

Metrics& ServerMetrics() {
  static Metrics m;
  return m;
}

}  // namespace ais
