#include "util/log_ring.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

TEST(LogRing, FiltersBySeverity) {
  LogRing ring(1 << 20);
  ring.Add(LogSeverity::kInfo, "started");
  ring.Add(LogSeverity::kWarning, "slow disk");
  ring.Add(LogSeverity::kError, "write failed");
  std::string all = ring.Text(LogSeverity::kInfo);
  EXPECT_NE(all.find("I "), std::string::npos);
  EXPECT_NE(all.find("started\n"), std::string::npos);
  std::string warn = ring.Text(LogSeverity::kWarning);
  EXPECT_EQ(warn.find("started"), std::string::npos);
  EXPECT_NE(warn.find("W "), std::string::npos);
  EXPECT_NE(warn.find("write failed"), std::string::npos);
  std::string err = ring.Text(LogSeverity::kError);
  EXPECT_EQ(err.find("slow disk"), std::string::npos);
  EXPECT_EQ(err.rfind("E ", 0), 0u);
}

TEST(LogRing, LevelDropsLinesBelowItAtRunTime) {
  LogRing ring(1 << 20);
  ring.set_level(LogSeverity::kWarning);
  ring.Add(LogSeverity::kInfo, "not kept");
  ring.Add(LogSeverity::kWarning, "kept");
  EXPECT_EQ(ring.Text(LogSeverity::kInfo).find("not kept"), std::string::npos);
  EXPECT_NE(ring.Text(LogSeverity::kInfo).find("kept"), std::string::npos);
  ring.set_level(LogSeverity::kInfo);
  ring.Add(LogSeverity::kInfo, "back on");
  EXPECT_NE(ring.Text(LogSeverity::kInfo).find("back on"), std::string::npos);
  LogSeverity s;
  EXPECT_TRUE(ParseLogLevel("error", &s) && s == LogSeverity::kError);
  EXPECT_TRUE(ParseLogLevel("3", &s) && s == LogSeverity::kInfo);
  EXPECT_TRUE(ParseLogLevel("4 fs,xs", &s) && s == LogSeverity::kInfo);
  EXPECT_FALSE(ParseLogLevel("", &s));
  EXPECT_FALSE(ParseLogLevel("9", &s));
  EXPECT_FALSE(ParseLogLevel("verbose", &s));
  EXPECT_EQ(LogLevelName(LogSeverity::kWarning), "warning");
}

TEST(LogRing, DropsOldestBeyondBound) {
  LogRing ring(200);
  for (int i = 0; i < 100; ++i) ring.Add(LogSeverity::kInfo, "line " + std::to_string(i));
  std::string text = ring.Text(LogSeverity::kInfo);
  EXPECT_LE(text.size(), 200u);
  EXPECT_EQ(text.find("line 0\n"), std::string::npos);
  EXPECT_NE(text.find("line 99\n"), std::string::npos);
  EXPECT_EQ(ring.total_lines(), 100u);
}

TEST(LogRing, OneLinePerMessage) {
  LogRing ring(1 << 20);
  ring.Add(LogSeverity::kInfo, "a\nb");
  EXPECT_EQ(ring.Text(LogSeverity::kInfo).find('\n'), ring.Text(LogSeverity::kInfo).size() - 1);
}

TEST(LogRing, ParsesSeverity) {
  LogSeverity s;
  ASSERT_TRUE(ParseLogSeverity("WARNING", &s));
  EXPECT_EQ(s, LogSeverity::kWarning);
  ASSERT_TRUE(ParseLogSeverity("", &s));
  EXPECT_EQ(s, LogSeverity::kInfo);
  ASSERT_TRUE(ParseLogSeverity("e", &s));
  EXPECT_EQ(s, LogSeverity::kError);
  EXPECT_FALSE(ParseLogSeverity("debug", &s));
}

}  // namespace
}  // namespace ais
