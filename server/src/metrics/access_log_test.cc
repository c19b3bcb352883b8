// AccessLog: the line format, every entry written once, and a full queue dropping (counted)
// instead of waiting.
#include "metrics/access_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ais {
namespace {

AccessEntry Entry(std::string method, std::string path) {
  AccessEntry e;
  e.method = std::move(method);
  e.path = std::move(path);
  e.status = 200;
  return e;
}

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "." + std::to_string(::getpid()))).string();
}

TEST(AccessLog, FormatIsOneJsonLine) {
  AccessEntry e{.time_ns = 1'764'158'400'123'456'789,
                .method = "GET",
                .path = "/v1/objects/b/\"o\"\n",
                .status = 206,
                .bytes = 10,
                .duration_us = 85,
                .remote = "127.0.0.1:5000"};
  const std::string line = AccessLog::Format(e);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // a newline in the path is escaped
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["time"], "2025-11-26T12:00:00.123456Z");
  EXPECT_EQ(j["path"], "/v1/objects/b/\"o\"\n");
  EXPECT_EQ(j["status"], 206);
  EXPECT_EQ(j["bytes"], 10);
  EXPECT_EQ(j["duration_us"], 85);
  EXPECT_EQ(j["remote"], "127.0.0.1:5000");
  EXPECT_EQ(line.rfind("{\"time\":", 0), 0u);  // time first, as log readers expect
}

TEST(AccessLog, WritesEveryEntryOnceThenCloses) {
  const std::string path = TempPath("ais_access_log");
  std::filesystem::remove(path);
  {
    auto log = AccessLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status().message();
    for (int i = 0; i < 1000; ++i) (*log)->Record(Entry("PUT", "/p" + std::to_string(i)));
  }  // the destructor writes what is queued
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(nlohmann::json::parse(line)["path"], "/p" + std::to_string(n));
    ++n;
  }
  EXPECT_EQ(n, 1000);
  std::filesystem::remove(path);
}

TEST(AccessLog, FullQueueDropsAndCounts) {
  const std::string path = TempPath("ais_access_log_small");
  auto log = AccessLog::Open(path, /*max_queue=*/4);
  ASSERT_TRUE(log.ok());
  // 100k records race the writer: some must find the 4-entry queue full; none is lost uncounted.
  for (int i = 0; i < 100000; ++i) (*log)->Record(Entry("GET", "/x"));
  const uint64_t dropped = (*log)->dropped();
  log->reset();
  std::ifstream in(path);
  uint64_t lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(lines + dropped, 100000u);
  std::filesystem::remove(path);
}

TEST(AccessLog, OpenFailsOnABadPath) {
  EXPECT_FALSE(AccessLog::Open("/nonexistent-dir/x/access.log").ok());
}

}  // namespace
}  // namespace ais
