// Metrics: what Count and RecordLatency count, where a latency lands, and the exposition's text.
#include "metrics/metrics.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

TEST(MetricsTest, CountsErrorsBytesAndLatencyBuckets) {
  Metrics m;
  m.Count(Op::kGet, 200, 100);
  m.Count(Op::kGet, 206, 4);
  m.AddBytes(Op::kGet, 6);
  m.Count(Op::kGet, 404, 0);
  const OpFigures& f = m.op(Op::kGet);
  EXPECT_EQ(f.count.load(), 3u);
  EXPECT_EQ(f.errors.load(), 1u);
  EXPECT_EQ(f.bytes.load(), 110u);
  EXPECT_EQ(f.ns_total.load(), 0u);  // counted, latency not yet recorded
  m.RecordLatency(Op::kGet, 50'000);         // 50 µs: the first bucket (<= 100 µs)
  m.RecordLatency(Op::kGet, 2'000'000);      // 2 ms: <= 2.5 ms
  m.RecordLatency(Op::kGet, 7'000'000'000);  // 7 s: past the last bound (+Inf)
  EXPECT_EQ(f.ns_total.load(), 7'002'050'000u);
  EXPECT_EQ(f.latency[0].load(), 1u);
  EXPECT_EQ(f.latency[4].load(), 1u);
  EXPECT_EQ(f.latency[kLatencyBuckets.size()].load(), 1u);
  EXPECT_EQ(m.op(Op::kPut).count.load(), 0u);
}

TEST(MetricsTest, DisabledCountsNothing) {
  Metrics m;
  m.set_enabled(false);
  m.Count(Op::kPut, 200, 5);
  m.RecordLatency(Op::kPut, 1);
  m.RecordColdGet(5);
  m.RecordGetBatchItems(1, 5);
  EXPECT_EQ(m.op(Op::kPut).count.load(), 0u);
  EXPECT_EQ(m.Exposition("n", {}).find("ais_target_get_cold_count{node_id=\"n\"} 0") != std::string::npos, true);
}

TEST(MetricsTest, ExpositionUsesAisNamesAndLabels) {
  Metrics m;
  m.Count(Op::kPut, 200, 1024);
  m.RecordLatency(Op::kPut, 1000);
  m.Count(Op::kGetBatch, 200, 0);
  m.RecordLatency(Op::kGetBatch, 1000);
  MetricsSnapshot snap;
  snap.mountpaths.push_back({"/data/mp1", 1000, 400});
  snap.jobs.push_back({"copy-bck", "finished", 2});
  const std::string text = m.Exposition("t.1", snap);
  EXPECT_NE(text.find("# TYPE ais_target_put_count counter"), std::string::npos) << text;
  EXPECT_NE(text.find("ais_target_put_count{bucket=\"\",xkind=\"\",node_id=\"t_1\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("ais_target_put_bytes{bucket=\"\",xkind=\"\",node_id=\"t_1\"} 1024"), std::string::npos);
  EXPECT_NE(text.find("ais_target_getbatch_count{node_id=\"t_1\"} 1"), std::string::npos);
  EXPECT_NE(text.find("ais_target_mountpath_used_bytes{mountpath=\"/data/mp1\",node_id=\"t_1\"} 400"), std::string::npos);
  EXPECT_NE(text.find("ais_target_jobs{xkind=\"copy-bck\",state=\"finished\",node_id=\"t_1\"} 2"), std::string::npos);
  EXPECT_NE(text.find("ais_target_request_latency_seconds_bucket{op=\"put\",node_id=\"t_1\",le=\"+Inf\"} 1"),
            std::string::npos);
}

}  // namespace
}  // namespace ais
