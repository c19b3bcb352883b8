// GetBatchJobs: requests for one bucket share one get-batch job, which idles, counts, aborts and ends.
#include "jobs/get_batch_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "util/test_util.h"

namespace ais {
namespace {

using namespace std::chrono_literals;

using test::Eventually;

TEST(GetBatchJobs, RequestsShareOneJobThatIdlesAndCounts) {
  JobRegistry registry;
  GetBatchJobs jobs(registry, 60s);
  auto a = jobs.Begin("b", [] {});
  auto b = jobs.Begin("b", [] {});
  EXPECT_EQ(a->job_id(), b->job_id());
  auto snap = registry.Get(a->job_id());
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->kind, "get-batch");
  EXPECT_TRUE(snap->running());
  EXPECT_FALSE(snap->idle);
  a->Add(3, 300);
  b->Add(1, 100);
  std::string id = a->job_id();
  a.reset();
  b.reset();
  EXPECT_TRUE(Eventually([&] {
    auto s = registry.Get(id);
    return s->idle && s->objs == 4 && s->bytes == 400;
  }));
  EXPECT_TRUE(registry.Get(id)->running());  // idle, not finished
  auto c = jobs.Begin("b", [] {});
  EXPECT_EQ(c->job_id(), id);
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->idle; }));
}

TEST(GetBatchJobs, AbortCancelsWorkInFlightAndTheNextRequestStartsANewJob) {
  JobRegistry registry;
  GetBatchJobs jobs(registry, 60s);
  std::atomic<int> cancelled{0};
  auto a = jobs.Begin("b", [&] { ++cancelled; });
  auto b = jobs.Begin("b", [&] { ++cancelled; });
  std::string id = a->job_id();
  b.reset();  // finished before the abort: not cancelled
  ASSERT_TRUE(registry.Abort(id));
  // At once, or as soon as the job's thread has registered its abort callback.
  EXPECT_TRUE(Eventually([&] { return cancelled.load() == 1; }));
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  EXPECT_TRUE(registry.Get(id)->aborted);
  auto c = jobs.Begin("b", [&] { ++cancelled; });
  EXPECT_NE(c->job_id(), id);
  a.reset();
  ASSERT_TRUE(registry.Abort(id));  // again, after the end: nothing left to cancel
  EXPECT_EQ(cancelled.load(), 1);
  auto running = registry.Query("", "get-batch", "", true);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].id, c->job_id());
}

TEST(GetBatchJobs, EndsAfterIdling) {
  JobRegistry registry;
  GetBatchJobs jobs(registry, 50ms);
  std::string id;
  {
    auto a = jobs.Begin("b", [] {});
    id = a->job_id();
    a->Add(1, 10);
  }
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  auto s = registry.Get(id);
  EXPECT_FALSE(s->aborted);
  EXPECT_EQ(s->objs, 1);
  EXPECT_TRUE(s->err.empty());
  auto b = jobs.Begin("b", [] {});
  EXPECT_NE(b->job_id(), id);
}

TEST(GetBatchJobs, AnotherBucketStartsAJobOfItsOwnAndBothKeepRunning) {
  JobRegistry registry;
  GetBatchJobs jobs(registry, 60s);
  auto a = jobs.Begin("b1", [] {});
  auto b = jobs.Begin("b2", [] {});
  auto none = jobs.Begin("", [] {});
  EXPECT_NE(a->job_id(), b->job_id());
  EXPECT_NE(a->job_id(), none->job_id());
  EXPECT_EQ(registry.Get(a->job_id())->bucket, "b1");
  EXPECT_EQ(registry.Get(b->job_id())->bucket, "b2");
  EXPECT_EQ(registry.Query("", "get-batch", "", true).size(), 3u);
  auto a2 = jobs.Begin("b1", [] {});
  EXPECT_EQ(a2->job_id(), a->job_id());
}

TEST(GetBatchJobs, DefaultIdleEndIsTheRegistrysIdleTimeout) {
  JobRegistry registry(50ms);
  GetBatchJobs jobs(registry);
  std::string id = jobs.Begin("b", [] {})->job_id();
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  EXPECT_FALSE(registry.Get(id)->aborted);
}

TEST(GetBatchJobs, AbortingTheRegistryCancelsWork) {
  std::atomic<int> cancelled{0};
  std::unique_ptr<GetBatchJobs::Work> a;
  {
    JobRegistry registry;
    GetBatchJobs jobs(registry, 60s);
    a = jobs.Begin("b", [&] { ++cancelled; });
  }  // the registry's destructor aborts and joins the job
  EXPECT_EQ(cancelled.load(), 1);
}

}  // namespace
}  // namespace ais
