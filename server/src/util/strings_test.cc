#include "util/strings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ais {
namespace {

TEST(ParseIecSize, AcceptsIecAndAisUnits) {
  EXPECT_EQ(ParseIecSize("12345"), 12345u);
  EXPECT_EQ(ParseIecSize("0"), 0u);
  EXPECT_EQ(ParseIecSize("1000B"), 1000u);
  EXPECT_EQ(ParseIecSize("1KiB"), 1024u);
  EXPECT_EQ(ParseIecSize("1KB"), 1024u);  // AIS treats KB as KiB
  EXPECT_EQ(ParseIecSize("1k"), 1024u);
  EXPECT_EQ(ParseIecSize("64MiB"), 64u << 20);
  EXPECT_EQ(ParseIecSize("64mib"), 64u << 20);
  EXPECT_EQ(ParseIecSize("1GiB"), 1ULL << 30);
  EXPECT_EQ(ParseIecSize("5GB"), 5ULL << 30);
  EXPECT_EQ(ParseIecSize("1TiB"), 1ULL << 40);
  EXPECT_EQ(ParseIecSize("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseIecSize("16777215TiB"), 16777215ULL << 40);
}

TEST(ParseIecSize, RejectsMalformed) {
  for (const char* s : {"", "B", "KiB", "-1", "+1", " 1", "1 KiB", "1KiB ", "1.5GiB", "1PiB", "1KiBB", "0x10",
                        "1e3", "18446744073709551616", "16777216TiB", "99999999999999999999999MiB"}) {
    EXPECT_FALSE(ParseIecSize(s).has_value()) << '"' << s << '"';
  }
}

TEST(FormatIecSize, ExactUnitsElseBytes) {
  EXPECT_EQ(FormatIecSize(0), "0B");
  EXPECT_EQ(FormatIecSize(1), "1B");
  EXPECT_EQ(FormatIecSize(1023), "1023B");
  EXPECT_EQ(FormatIecSize(1024), "1KiB");
  EXPECT_EQ(FormatIecSize(1536), "1536B");
  EXPECT_EQ(FormatIecSize(3 << 10), "3KiB");
  EXPECT_EQ(FormatIecSize(64ULL << 20), "64MiB");
  EXPECT_EQ(FormatIecSize(1025ULL << 20), "1025MiB");
  EXPECT_EQ(FormatIecSize(1ULL << 30), "1GiB");
  EXPECT_EQ(FormatIecSize(1ULL << 40), "1TiB");
  EXPECT_EQ(FormatIecSize(1ULL << 50), "1024TiB");
  EXPECT_EQ(FormatIecSize(UINT64_MAX), "18446744073709551615B");
}

TEST(IecSize, RoundTrip) {
  std::vector<uint64_t> values = {0, 1, 1000, 1023, 1024, 1025, 4096, 1ULL << 20, (1ULL << 20) + 1, 1ULL << 30,
                                  5ULL << 30, 1ULL << 40, 16777215ULL << 40, UINT64_MAX, UINT64_MAX - 1};
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    values.push_back(v);
    values.push_back(v << 10);  // often an exact unit
    values.push_back((v & 0xffffff) << (10 * (1 + rng() % 4)));
  }
  for (uint64_t v : values) {
    std::string s = FormatIecSize(v);
    auto back = ParseIecSize(s);
    ASSERT_TRUE(back.has_value()) << v << " -> " << s;
    EXPECT_EQ(*back, v) << s;
  }
}

TEST(ParseUint, StrictDecimal) {
  EXPECT_EQ(ParseUint("0"), 0u);
  EXPECT_EQ(ParseUint("007"), 7u);
  EXPECT_EQ(ParseUint("18446744073709551615"), UINT64_MAX);
  for (const char* s : {"", "-1", "+1", " 1", "1 ", "1a", "0x1", "18446744073709551616"}) {
    EXPECT_FALSE(ParseUint(s).has_value()) << '"' << s << '"';
  }
}

TEST(PercentDecode, DecodesEscapes) {
  EXPECT_EQ(PercentDecode("", false), "");
  EXPECT_EQ(PercentDecode("plain/name.bin", false), "plain/name.bin");
  EXPECT_EQ(PercentDecode("a%20b", false), "a b");
  EXPECT_EQ(PercentDecode("%41%42c", false), "ABc");
  EXPECT_EQ(PercentDecode("%2f%2F", false), "//");  // either hex case
  EXPECT_EQ(PercentDecode("%25", false), "%");       // an escaped '%' is not decoded twice
  EXPECT_EQ(PercentDecode("%2541", false), "%41");
  EXPECT_EQ(PercentDecode("%E2%9C%93", false), "\xE2\x9C\x93");  // UTF-8 check mark
  auto nul = PercentDecode("a%00b", false);
  ASSERT_TRUE(nul.has_value());
  EXPECT_EQ(*nul, std::string("a\0b", 3));  // decoded faithfully; name validation rejects it later
}

TEST(PercentDecode, PlusOnlyInQueryStrings) {
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");  // path: '+' is literal
  EXPECT_EQ(PercentDecode("a+b", true), "a b");   // query: '+' is a space
  EXPECT_EQ(PercentDecode("%2B", true), "+");     // an escaped '+' stays '+'
  EXPECT_EQ(PercentDecode("++%20", true), "   ");
}

TEST(PercentDecode, RejectsMalformedEscapes) {
  for (const char* s : {"%", "%4", "a%", "a%4", "100%", "%zz", "%4g", "%g4", "%%", "%%41", "%-1", "% 1", "a%2"}) {
    EXPECT_FALSE(PercentDecode(s, false).has_value()) << '"' << s << '"';
    EXPECT_FALSE(PercentDecode(s, true).has_value()) << '"' << s << '"';
  }
}

TEST(Split, KeepsEmptyFields) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(Split("a,b,c", ','), (V{"a", "b", "c"}));
  EXPECT_EQ(Split("abc", ','), (V{"abc"}));
  EXPECT_EQ(Split("", ','), (V{""}));
  EXPECT_EQ(Split(",", ','), (V{"", ""}));
  EXPECT_EQ(Split("a,,b", ','), (V{"a", "", "b"}));
  EXPECT_EQ(Split(",a,", ','), (V{"", "a", ""}));
  EXPECT_EQ(Split("a/b/c", '/'), (V{"a", "b", "c"}));
  EXPECT_EQ(Split("a,b", '/'), (V{"a,b"}));
}

TEST(Split, PiecesJoinBackToInput) {
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string s;
    for (size_t n = rng() % 20; n > 0; --n) s.push_back("ab,"[rng() % 3]);
    auto parts = Split(s, ',');
    std::string joined;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k) joined.push_back(',');
      joined.append(parts[k]);
      EXPECT_EQ(parts[k].find(','), std::string_view::npos);
    }
    EXPECT_EQ(joined, s);
    EXPECT_EQ(parts.size(), 1 + static_cast<size_t>(std::count(s.begin(), s.end(), ',')));
  }
}

TEST(IEquals, IgnoresAsciiCase) {
  EXPECT_TRUE(IEquals("Ais-Checksum-Type", "ais-checksum-type"));
  EXPECT_TRUE(IEquals("", ""));
  EXPECT_FALSE(IEquals("abc", "abd"));
  EXPECT_FALSE(IEquals("abc", "abcd"));
}

TEST(RandomSecret, AlphanumericOfTheLengthAskedAndNeverTheSame) {
  auto a = RandomSecret(10), b = RandomSecret(10), long_one = RandomSecret(4000);
  ASSERT_TRUE(a.ok() && b.ok() && long_one.ok());
  EXPECT_EQ(a->size(), 10u);
  EXPECT_EQ(long_one->size(), 4000u);
  EXPECT_NE(*a, *b);
  for (char c : *long_one) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << c;
  // Every symbol turns up in 4000 draws of 62 (a bias or a short alphabet would show).
  EXPECT_EQ(std::set<char>(long_one->begin(), long_one->end()).size(), 62u);
}

}  // namespace
}  // namespace ais
