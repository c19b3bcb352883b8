// Metrics: this node's request counters and latency histograms. Recorded per request by the
// router (one relaxed atomic add per figure: nothing on the data path waits for a lock): the
// count, error and bytes as the reply begins, before any byte of it leaves (so a client holding
// its reply finds it counted, whatever connection it asks on), the latency once the reply is out
// (a moment later: a scrape may see a request's count before its latency). Read by
// the Prometheus exposition (GET /metrics) and by the AIS stats tracker (node_status, the CLI's
// `show performance`), so both always agree.
//
// Names follow AIS (spec cli-and-monitoring §2): `ais_target_<op>_count`, `err_<op>_count`,
// `<op>_bytes`, `<op>_ns_total`, labels `node_id` (constant) and `bucket` ("" unless detailed, as
// AIS by default). What AIS does not export (latency histograms, requests in flight, open
// connections, capacity per mountpath, jobs by kind and state) has names of our own under the same
// prefix, listed in docs/metrics.md.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ais {

// The operations counted, as a request is classified by the router.
enum class Op : uint8_t { kGet, kPut, kHead, kDelete, kList, kAppend, kGetBatch, kOther };
inline constexpr size_t kNumOps = 8;

// Upper bounds (seconds) of the latency histograms' buckets; +Inf is implied.
inline constexpr std::array<double, 14> kLatencyBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};

struct OpFigures {
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> errors{0};     // replies with a 4xx/5xx status
  std::atomic<uint64_t> bytes{0};      // object bytes: served (GET, GetBatch) or received (PUT, append)
  std::atomic<uint64_t> ns_total{0};   // summed latency
  // Per bucket, not cumulative. Their sum trails `count` while a counted reply is being sent.
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> latency{};
};

// Gauges the exposition reads from elsewhere at scrape time (store, job registry).
struct MetricsSnapshot {
  struct Mountpath {
    std::string path;
    uint64_t capacity = 0;
    uint64_t used = 0;
  };
  struct Jobs {
    std::string kind;
    std::string state;  // "running", "idle", "finished", "aborted", "failed"
    uint64_t count = 0;
  };
  int64_t uptime_ns = 0;
  int64_t state_flags = 0;
  uint64_t connections = 0;  // open client connections
  // The access log (metrics/access_log.h), when on: lines written and entries dropped (queue full).
  bool access_log = false;
  uint64_t access_log_lines = 0;
  uint64_t access_log_dropped = 0;
  std::vector<Mountpath> mountpaths;
  std::vector<Jobs> jobs;
};

class Metrics {
 public:
  // A request of `op` answered with HTTP `status`, moving `bytes` object bytes (more may follow
  // through AddBytes, for a reply streamed without a known length).
  void Count(Op op, unsigned status, uint64_t bytes);
  void AddBytes(Op op, uint64_t bytes) {
    if (enabled() && bytes) ops_[static_cast<size_t>(op)].bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  // The latency of a request of `op`, counted before: `ns` from its arrival until its reply was out.
  void RecordLatency(Op op, uint64_t ns);
  // Range GETs and cold GETs (fetches from a remote backend, by GET, prefetch or a batch) and
  // GetBatch items are counted apart too.
  void RecordRangeGet() {
    if (enabled()) range_gets_.fetch_add(1, std::memory_order_relaxed);
  }
  void RecordColdGet(uint64_t bytes) {
    if (!enabled()) return;
    cold_gets_.fetch_add(1, std::memory_order_relaxed);
    cold_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void RecordGetBatchItems(uint64_t items, uint64_t bytes) {
    if (!enabled()) return;
    batch_items_.fetch_add(items, std::memory_order_relaxed);
    batch_item_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void AddInFlight(int64_t d) { in_flight_.fetch_add(d, std::memory_order_relaxed); }  // (the router checks enabled())

  const OpFigures& op(Op o) const { return ops_[static_cast<size_t>(o)]; }

  // The Prometheus text exposition (format 0.0.4) of every figure, `node_id` labelling each.
  std::string Exposition(const std::string& node_id, const MetricsSnapshot& snap) const;

  // Off (--no-metrics): nothing is counted (the exposition shows zeros), for the side-by-side
  // measurement of what counting costs.
  void set_enabled(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

 private:
  std::array<OpFigures, kNumOps> ops_;
  std::atomic<uint64_t> range_gets_{0};
  std::atomic<uint64_t> cold_gets_{0};
  std::atomic<uint64_t> cold_bytes_{0};
  std::atomic<uint64_t> batch_items_{0};
  std::atomic<uint64_t> batch_item_bytes_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> enabled_{true};
};

// The process's metrics (one node per process).
Metrics& ServerMetrics();

}  // namespace ais
