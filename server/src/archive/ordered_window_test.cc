// OrderedWindow: strict order, real concurrency, bounded look-ahead, early stop.
#include "archive/ordered_window.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>

namespace ais {
namespace {

using namespace std::chrono_literals;

struct Item {
  size_t index = 0;
  std::string data;
  size_t memory() const { return data.size(); }
};

// The workers' threads, for every test of this file (a pool outlives the windows it serves).
WorkerPool& Pool() {
  static WorkerPool pool(64, std::chrono::seconds(1));
  return pool;
}

TEST(OrderedWindow, HandsOutInOrderDespiteRandomDelays) {
  const size_t n = 500;
  std::atomic<size_t> max_ahead{0};
  std::atomic<size_t> taken{0};
  std::set<std::thread::id> threads;
  std::mutex mu;
  OrderedWindow<Item>::Options opts;
  opts.pool = &Pool();
  opts.window = 16;
  opts.workers = 4;
  OrderedWindow<Item> w(n, opts, [&](size_t i) {
    size_t ahead = i - std::min(i, taken.load());
    size_t prev = max_ahead.load();
    while (ahead > prev && !max_ahead.compare_exchange_weak(prev, ahead)) {
    }
    {
      std::lock_guard l(mu);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 300));
    return Item{i, std::to_string(i)};
  });
  for (size_t i = 0; i < n; ++i) {
    Item it = w.Take(i);
    ASSERT_EQ(it.index, i);
    ASSERT_EQ(it.data, std::to_string(i));
    taken = i + 1;
  }
  EXPECT_LE(max_ahead.load(), opts.window);
  EXPECT_GT(threads.size(), 1u);
}

TEST(OrderedWindow, MemoryBudgetLimitsLookAhead) {
  const size_t n = 100;
  std::atomic<size_t> prepared{0};
  OrderedWindow<Item>::Options opts;
  opts.pool = &Pool();
  opts.window = 64;
  opts.workers = 2;
  opts.run = 1;
  opts.memory_budget = 10 * 1000;
  opts.slow_item = 0us;  // the worker starts at once, before anything is taken
  OrderedWindow<Item> w(n, opts, [&](size_t i) {
    ++prepared;
    return Item{i, std::string(1000, 'x')};
  });
  std::this_thread::sleep_for(100ms);
  // About the budget's worth (plus what each worker had in hand), far below the window.
  EXPECT_LE(prepared.load(), 12u);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(w.Take(i).index, i);
}

TEST(OrderedWindow, DestroyedEarlyStopsTheWorkers) {
  std::atomic<size_t> prepared{0};
  {
    OrderedWindow<Item>::Options opts;
    opts.pool = &Pool();
    opts.window = 8;
    OrderedWindow<Item> w(1000000, opts, [&](size_t i) {
      ++prepared;
      return Item{i, {}};
    });
    EXPECT_EQ(w.Take(0).index, 0u);
    EXPECT_EQ(w.Take(1).index, 1u);
  }
  EXPECT_LE(prepared.load(), 2u + 8u + 8u);
}

TEST(OrderedWindow, SingleItemAndSingleSlot) {
  OrderedWindow<Item>::Options opts;
  opts.pool = &Pool();
  opts.window = 1;
  opts.workers = 3;
  OrderedWindow<Item> w(5, opts, [](size_t i) { return Item{i, {}}; });
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(w.Take(i).index, i);
}

TEST(OrderedWindow, WithoutSpareThreadsTheConsumerPreparesItems) {
  WorkerPool none(0, 10ms);  // every Run() is refused
  OrderedWindow<Item>::Options opts;
  opts.pool = &none;
  opts.slow_item = 0us;
  const auto consumer = std::this_thread::get_id();
  std::atomic<bool> elsewhere{false};
  OrderedWindow<Item> w(20, opts, [&](size_t i) {
    if (std::this_thread::get_id() != consumer) elsewhere = true;
    return Item{i, std::to_string(i)};
  });
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(w.Take(i).index, i);
  EXPECT_FALSE(elsewhere.load());
}

TEST(OrderedWindow, FastItemsStayOnTheConsumerSlowOnesCallInTheWorkers) {
  const auto consumer = std::this_thread::get_id();
  std::atomic<size_t> elsewhere{0};
  OrderedWindow<Item>::Options opts;
  opts.pool = &Pool();
  opts.workers = 2;
  opts.slow_item = 2ms;
  // Items 0..103 (13 runs) are fast, every item after them is slow.
  OrderedWindow<Item> w(400, opts, [&](size_t i) {
    if (std::this_thread::get_id() != consumer) ++elsewhere;
    if (i >= 104) std::this_thread::sleep_for(3ms);
    return Item{i, {}};
  });
  for (size_t i = 0; i < 104; ++i) EXPECT_EQ(w.Take(i).index, i);
  EXPECT_EQ(elsewhere.load(), 0u);
  for (size_t i = 104; i < 400; ++i) EXPECT_EQ(w.Take(i).index, i);
  EXPECT_GT(elsewhere.load(), 0u);
}

}  // namespace
}  // namespace ais
