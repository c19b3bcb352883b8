#include "jobs/object_selection.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

std::vector<std::string> Expand(const std::string& t) {
  auto p = NameTemplate::Parse(t);
  EXPECT_TRUE(p.ok()) << p.status().message();
  std::vector<std::string> out;
  p->Expand([&](const std::string& n) {
    out.push_back(n);
    return true;
  });
  return out;
}

TEST(NameTemplate, BashRangeKeepsPadding) {
  auto names = Expand("shard-{0000..0003}.tar");
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0], "shard-0000.tar");
  EXPECT_EQ(names[3], "shard-0003.tar");
}

TEST(NameTemplate, StepAndSeveralRanges) {
  auto names = Expand("a{1..5..2}-{0..1}");
  std::vector<std::string> want = {"a1-0", "a1-1", "a3-0", "a3-1", "a5-0", "a5-1"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(NameTemplate::Parse("a{1..5..2}-{0..1}")->Count(), 6u);
}

TEST(NameTemplate, ThousandNames) {
  auto names = Expand("obj-{0..999}");
  ASSERT_EQ(names.size(), 1000u);
  EXPECT_EQ(names[999], "obj-999");
}

TEST(NameTemplate, AtStyle) {
  auto names = Expand("x-@02.bin");
  std::vector<std::string> want = {"x-00.bin", "x-01.bin", "x-02.bin"};
  EXPECT_EQ(names, want);
}

TEST(NameTemplate, PrefixOnly) {
  auto t = NameTemplate::Parse("logs/2025/");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->ranges.empty());
  EXPECT_EQ(t->prefix, "logs/2025/");
}

TEST(NameTemplate, RejectsBadRanges) {
  EXPECT_FALSE(NameTemplate::Parse("a{5..1}").ok());
  EXPECT_FALSE(NameTemplate::Parse("a{1..5..0}").ok());
  EXPECT_FALSE(NameTemplate::Parse("a{1..x}").ok());
  EXPECT_FALSE(NameTemplate::Parse("a{1}").ok());
  EXPECT_FALSE(NameTemplate::Parse("a%06d").ok());
  auto st = NameTemplate::Parse("a{5..1}").status();
  EXPECT_NE(st.message().find("'start' cannot be greater than 'end'"), std::string::npos);
}

TEST(ObjectSelection, FromJson) {
  auto list = ObjectSelection::FromJson({{"objnames", {"a", "b/c"}}});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->kind(), ObjectSelection::Kind::kList);
  auto range = ObjectSelection::FromJson({{"template", "p-{0..9}"}});
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->kind(), ObjectSelection::Kind::kRange);
  auto all = ObjectSelection::FromJson(nlohmann::json::object());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->kind(), ObjectSelection::Kind::kPrefix);
  EXPECT_EQ(all->tmpl().prefix, "");
  EXPECT_FALSE(ObjectSelection::FromJson({{"objnames", {"a"}}, {"template", "b"}}).ok());
  EXPECT_FALSE(ObjectSelection::FromJson({{"objnames", {"../x"}}}).ok());
  EXPECT_FALSE(ObjectSelection::FromJson({{"template", "../x{0..1}"}}).ok());
  EXPECT_FALSE(ObjectSelection::FromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace ais
