// PieceQueue: order, bounds, notification and cancellation across threads.
#include "archive/piece_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <chrono>
#include <thread>

namespace ais {
namespace {

using namespace std::chrono_literals;

std::string Concat(const std::vector<PieceQueue::Piece>& pieces) {
  std::string out;
  for (const auto& p : pieces) {
    EXPECT_FALSE(p.is_file());
    out.append(p.data(), p.size());
  }
  return out;
}

TEST(PieceQueue, TakeRespectsMinimumAndMergesMemory) {
  std::atomic<int> notified{0};
  PieceQueue q(PieceQueue::Limits{}, [&] { ++notified; });
  auto t = q.Take(10);
  EXPECT_TRUE(t.pieces.empty());
  EXPECT_FALSE(t.closed);
  ASSERT_TRUE(q.Append("abc", 3).ok());
  EXPECT_EQ(notified.load(), 0);  // below the minimum the consumer asked for
  ASSERT_TRUE(q.Append("defghij", 7).ok());
  EXPECT_EQ(notified.load(), 1);
  t = q.Take(10);
  ASSERT_EQ(t.pieces.size(), 1u);  // merged into one block
  EXPECT_EQ(Concat(t.pieces), "abcdefghij");
  q.Close(Status::OK());
  t = q.Take(1);
  EXPECT_TRUE(t.closed);
  EXPECT_TRUE(t.final.ok());
}

TEST(PieceQueue, AppendPartsIsOneStep) {
  std::atomic<int> notified{0};
  PieceQueue q(PieceQueue::Limits{}, [&] { ++notified; });
  EXPECT_TRUE(q.Take(6).pieces.empty());
  const std::string_view parts[] = {"ab", "", "cd", "ef"};
  ASSERT_TRUE(q.AppendParts(parts, 4).ok());
  EXPECT_EQ(notified.load(), 1);  // once, for the whole entry
  auto t = q.Take(6);
  EXPECT_EQ(Concat(t.pieces), "abcdef");
}

TEST(PieceQueue, FilesKeepTheirPlace) {
  PieceQueue q(PieceQueue::Limits{}, [] {});
  auto owner = std::make_shared<int>(7);
  ASSERT_TRUE(q.Append("h", 1).ok());
  ASSERT_TRUE(q.AppendFile(FileSegment{5, 10, 20}, owner).ok());
  ASSERT_TRUE(q.Append("t", 1).ok());
  q.Close(Status::NotFound("x"));
  auto t = q.Take(1);
  ASSERT_EQ(t.pieces.size(), 3u);
  EXPECT_EQ(t.pieces[0].mem, "h");
  EXPECT_TRUE(t.pieces[1].is_file());
  EXPECT_EQ(t.pieces[1].file.len, 20u);
  EXPECT_EQ(t.pieces[1].owner, owner);
  EXPECT_EQ(t.pieces[2].mem, "t");
  EXPECT_TRUE(t.closed);
  EXPECT_TRUE(t.final.IsNotFound());
}

TEST(PieceQueue, ProducerBlocksAtTheLimitAndCancelReleasesIt) {
  PieceQueue::Limits lim;
  lim.max_memory = 1000;
  lim.block = 100;
  PieceQueue q(lim, [] {});
  std::string chunk(500, 'x');
  ASSERT_TRUE(q.Append(chunk.data(), chunk.size()).ok());
  ASSERT_TRUE(q.Append(chunk.data(), chunk.size()).ok());
  std::atomic<bool> returned{false};
  Status st;
  std::thread producer([&] {
    st = q.Append(chunk.data(), chunk.size());
    returned = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(returned.load());  // 1000 bytes queued: must wait
  q.Cancel();
  producer.join();
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(q.Append("x", 1).ok());
}

TEST(PieceQueue, StreamOfManyPiecesArrivesInOrder) {
  PieceQueue::Limits lim;
  lim.max_memory = 4096;
  lim.block = 512;
  std::mutex mu;
  std::condition_variable cv;
  bool poked = false;
  PieceQueue q(lim, [&] {
    std::lock_guard l(mu);
    poked = true;
    cv.notify_one();
  });
  std::string want;
  for (int i = 0; i < 20000; ++i) want += std::to_string(i) + ",";
  std::thread producer([&] {
    for (size_t off = 0; off < want.size();) {
      size_t n = std::min<size_t>(7 + off % 300, want.size() - off);
      ASSERT_TRUE(q.Append(want.data() + off, n).ok());
      off += n;
    }
    q.Close(Status::OK());
  });
  std::string got;
  for (;;) {
    auto t = q.Take(1024);
    got += Concat(t.pieces);
    if (t.closed && t.pieces.empty()) break;
    if (t.closed) continue;
    if (t.pieces.empty()) {
      std::unique_lock l(mu);
      cv.wait_for(l, 10ms, [&] { return poked; });
      poked = false;
      auto rest = q.Take(1);  // the timeout path: take anything
      got += Concat(rest.pieces);
      if (rest.closed && rest.pieces.empty()) break;
    }
  }
  producer.join();
  EXPECT_EQ(got, want);
}

ByteBuffer Filled(size_t n, char c) {
  ByteBuffer b(n);
  std::memset(b.data(), c, n);
  return b;
}

TEST(PieceQueue, OwnedBuffersAreKeptAsTheyAreUnlessSmall) {
  PieceQueue q(PieceQueue::Limits{}, [] {});
  ByteBuffer big = Filled(10000, 'b');
  const char* big_data = big.data();
  ASSERT_TRUE(q.AppendOwned(std::move(big)).ok());
  ASSERT_TRUE(q.Append("tail", 4).ok());  // not appended to the owned buffer
  ASSERT_TRUE(q.AppendOwned(Filled(100, 's')).ok());  // small: merged
  auto t = q.Take(1);
  ASSERT_EQ(t.pieces.size(), 2u);
  EXPECT_EQ(t.pieces[0].data(), big_data);  // no copy
  EXPECT_EQ(t.pieces[0].size(), 10000u);
  EXPECT_EQ(std::string(t.pieces[1].data(), t.pieces[1].size()), "tail" + std::string(100, 's'));
  EXPECT_EQ(Concat(t.pieces), std::string(10000, 'b') + "tail" + std::string(100, 's'));
}

}  // namespace
}  // namespace ais
