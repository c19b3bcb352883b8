// WorkerPool: threads are reused, bounded, linger and exit, and shut down after their tasks.
#include "archive/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

namespace ais {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPool, ReusesAnIdleThread) {
  WorkerPool pool(4, 10s);
  std::set<std::thread::id> ids;
  for (int i = 0; i < 5; ++i) {
    std::promise<std::thread::id> p;
    ASSERT_TRUE(pool.Run([&p] { p.set_value(std::this_thread::get_id()); }));
    ids.insert(p.get_future().get());
    // Let the thread count itself idle again before the next task.
    for (int k = 0; k < 100 && pool.threads() != 1; ++k) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_LE(ids.size(), 2u);  // one thread, but a task may end before its thread counts idle
}

TEST(WorkerPool, BlockingTasksRunConcurrentlyUpToTheLimit) {
  WorkerPool pool(3, 10s);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool.Run([&, gate] {
      ++started;
      gate.wait();
    }));
  }
  EXPECT_FALSE(pool.Run([] {}));  // three tasks block three threads
  release.set_value();
  pool.Shutdown();
  EXPECT_EQ(started.load(), 3);
  EXPECT_EQ(pool.threads(), 0u);
  EXPECT_FALSE(pool.Run([] {}));  // shut down
}

TEST(WorkerPool, IdleThreadsExitAfterLingering) {
  WorkerPool pool(2, 20ms);
  std::atomic<bool> ran{false};
  ASSERT_TRUE(pool.Run([&] { ran = true; }));
  for (int k = 0; k < 500 && pool.threads() != 0; ++k) std::this_thread::sleep_for(2ms);
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(pool.threads(), 0u);
}

}  // namespace
}  // namespace ais
