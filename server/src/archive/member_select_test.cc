// GET ?archregx= selection: modes, WebDataset keys, the tar it writes.
#include "archive/member_select.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

bool Match(std::string_view mode, const std::string& pat, std::string_view name) {
  auto s = MemberSelect::Make(mode, pat);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s->Matches(name);
}

TEST(MemberSelect, Modes) {
  EXPECT_TRUE(Match("", "a/", "a/b.jpg"));
  EXPECT_TRUE(Match("*", "a/", "a/b.jpg"));
  EXPECT_FALSE(Match("prefix", "b", "a/b.jpg"));
  EXPECT_TRUE(Match("suffix", ".jpg", "a/b.jpg"));
  EXPECT_TRUE(Match("substr", "/b", "a/b.jpg"));
  EXPECT_TRUE(Match("regexp", "b\\.(jpg|png)$", "a/b.png"));
  EXPECT_FALSE(Match("regexp", "^b", "a/b.png"));
  EXPECT_TRUE(Match("wdskey", "a/b", "a/b.jpg"));
  EXPECT_TRUE(Match("wdskey", "a/b.x", "/a/b.x.cls"));
  EXPECT_FALSE(Match("wdskey", "a/b", "a/bc.jpg"));
  EXPECT_TRUE(Match("suffix", "", "anything"));  // empty pattern: everything
}

TEST(MemberSelect, BadInput) {
  EXPECT_FALSE(MemberSelect::Make("glob", "x").ok());
  EXPECT_FALSE(MemberSelect::Make("regexp", "(unclosed").ok());
}

TEST(MemberSelect, WdsKey) {
  EXPECT_EQ(MemberSelect::WdsKey("a/b.c/d.e.f"), "a/b.c/d.e");
  EXPECT_EQ(MemberSelect::WdsKey("a.b/c"), "a.b/c");
  EXPECT_EQ(MemberSelect::WdsKey("/x.y"), "x");
}

}  // namespace
}  // namespace ais
