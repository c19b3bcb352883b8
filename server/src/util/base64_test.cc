#include "util/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ais {
namespace {

TEST(Base64, BothAlphabetsAndPadding) {
  EXPECT_EQ(DecodeBase64("+/9pZA=="), std::string("\xfb\xff\x69\x64", 4));
  EXPECT_EQ(DecodeBase64("-_9pZA=="), std::string("\xfb\xff\x69\x64", 4));
  EXPECT_EQ(DecodeBase64("-_9pZA"), std::string("\xfb\xff\x69\x64", 4));
  EXPECT_EQ(DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("a"));
  EXPECT_FALSE(DecodeBase64("ab$d"));
  EXPECT_FALSE(DecodeBase64("ab=d"));
  EXPECT_FALSE(DecodeBase64("ab d"));
  const std::vector<std::string> samples = {"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)};
  for (const std::string& s : samples) {
    EXPECT_EQ(DecodeBase64(EncodeBase64(s)), s);
  }
  EXPECT_EQ(EncodeBase64(std::string("\xfb\xff\x69\x64", 4)), "+/9pZA==");
}

}  // namespace
}  // namespace ais
