// JobRegistry: a job that idles after its work stays running, idle, for the idle timeout, then
// ends; an abort ends it sooner; a failed one ends at once.
#include "jobs/job_registry.h"

#include <gtest/gtest.h>

#include <thread>

#include "util/test_util.h"

namespace ais {
namespace {

using namespace std::chrono_literals;

using test::Eventually;

JobOptions Idling() {
  JobOptions o;
  o.idles_after = true;
  return o;
}

TEST(JobRegistry, IdlingJobStaysRunningIdleThenEnds) {
  JobRegistry registry(300ms);
  std::string id = registry.Start("copy-listrange", "b", [](JobControl& jc) {
    jc.Add(2, 20);
    return Status::OK();
  }, Idling());
  EXPECT_TRUE(Eventually([&] { return registry.Get(id)->idle; }));
  auto s = registry.Get(id);
  EXPECT_TRUE(s->running());
  EXPECT_EQ(s->objs, 2);
  EXPECT_EQ(registry.Query("", "copy-listrange", "", true).size(), 1u);
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  s = registry.Get(id);
  EXPECT_FALSE(s->aborted);
  EXPECT_FALSE(s->idle);  // idle is a running job's state; a finished one is simply done
  EXPECT_TRUE(s->err.empty());
}

TEST(JobRegistry, AbortEndsAnIdlingJobAtOnce) {
  JobRegistry registry(60s);
  std::string id = registry.Start("copy-listrange", "b", [](JobControl&) { return Status::OK(); }, Idling());
  EXPECT_TRUE(Eventually([&] { return registry.Get(id)->idle; }));
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(registry.Abort(id));
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(registry.Get(id)->aborted);
}

TEST(JobRegistry, FailedIdlingJobEndsAtOnce) {
  JobRegistry registry(60s);
  std::string id = registry.Start(
      "copy-listrange", "b", [](JobControl&) { return Status::NotFound("gone"); }, Idling());
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
  EXPECT_EQ(registry.Get(id)->err, "gone");
}

TEST(JobRegistry, OtherJobsEndWithTheirWork) {
  JobRegistry registry(60s);
  std::string id = registry.Start("lru", "", [](JobControl&) { return Status::OK(); });
  EXPECT_TRUE(Eventually([&] { return !registry.Get(id)->running(); }));
}

}  // namespace
}  // namespace ais
