#include "s3/list_params.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace ais::s3 {
namespace {

using Query = std::map<std::string, std::string>;

Result<ListParams> Parse(const Query& q, uint64_t max_page = 10000) {
  return ParseListParams(
      [&](std::string_view k) -> std::optional<std::string> {
        auto it = q.find(std::string(k));
        if (it == q.end()) return std::nullopt;
        return it->second;
      },
      max_page);
}

TEST(S3ListParams, Defaults) {
  auto p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->v2);
  EXPECT_EQ(p->max_keys, 10000u);  // the server's page size when the client does not say
  EXPECT_EQ(p->after, "");
  EXPECT_EQ(Parse({}, 10)->max_keys, 1000u);
}

TEST(S3ListParams, V2TokenWinsOverStartAfter) {
  auto p = Parse({{"list-type", "2"}, {"start-after", "b"}, {"continuation-token", EncodeContinuationToken("x/y")},
                  {"max-keys", "7"}, {"fetch-owner", "true"}, {"encoding-type", "url"}});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->v2);
  EXPECT_EQ(p->after, "x/y");
  EXPECT_EQ(p->max_keys, 7u);
  EXPECT_TRUE(p->fetch_owner);
  EXPECT_TRUE(p->url_encoding);
  auto s = Parse({{"list-type", "2"}, {"start-after", "b"}});
  EXPECT_EQ(s->after, "b");
  auto v1 = Parse({{"marker", "m"}, {"start-after", "ignored"}});
  EXPECT_EQ(v1->after, "m");
}

TEST(S3ListParams, Invalid) {
  EXPECT_FALSE(Parse({{"max-keys", "-1"}}).ok());
  EXPECT_FALSE(Parse({{"max-keys", "x"}}).ok());
  EXPECT_FALSE(Parse({{"encoding-type", "base64"}}).ok());
  EXPECT_FALSE(Parse({{"list-type", "3"}}).ok());
  EXPECT_FALSE(Parse({{"list-type", "2"}, {"continuation-token", "!!"}}).ok());
  EXPECT_EQ(Parse({{"max-keys", "999999"}}, 5000)->max_keys, 5000u);
  EXPECT_EQ(Parse({{"max-keys", "999999"}}, 10)->max_keys, 1000u);
}

TEST(S3ListParams, TokenRoundTrip) {
  for (std::string s : {"", "a", "ab", "abc", "dir/", "\xc3\xa9/\xff"}) {
    auto d = DecodeContinuationToken(EncodeContinuationToken(s));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, s);
    EXPECT_FALSE(EncodeContinuationToken(s).empty());
  }
}

// The S3 model: every key under prefix, rolled up at the first delimiter after the prefix,
// in order, after `after`; then cut to max_keys.
std::vector<std::string> Model(const std::set<std::string>& keys, const std::string& prefix, const std::string& delim,
                               const std::string& after) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (!k.starts_with(prefix)) continue;
    std::string e = k;
    if (!delim.empty()) {
      auto at = k.find(delim, prefix.size());
      if (at != std::string::npos) e = k.substr(0, at + delim.size());
    }
    if (e <= after) continue;
    if (out.empty() || out.back() != e) out.push_back(e);
  }
  return out;
}

TEST(S3ListParams, GroupPageMatchesModelAcrossPages) {
  std::set<std::string> keys = {"a",     "a/b",   "a/c/d", "a/c/e", "ab",   "ab/c", "b",  "b/x/y/z",
                                "c.txt", "c/1",   "c/2",   "d/e/f", "z",    "zz/",  "zz/a"};
  auto fetch = [&](const std::string& prefix) {
    return [&keys, prefix](const std::string& after, size_t limit) -> Result<std::vector<ObjectMeta>> {
      std::vector<ObjectMeta> out;
      for (auto it = keys.upper_bound(after); it != keys.end() && out.size() < limit; ++it) {
        if (!it->starts_with(prefix)) continue;
        ObjectMeta m;
        m.name = *it;
        out.push_back(m);
      }
      return out;
    };
  };
  for (std::string prefix : {"", "a", "a/", "c", "zz/", "nothing"}) {
    for (std::string delim : {"", "/", "c", "/c"}) {
      for (uint64_t max_keys : {1, 2, 3, 100}) {
        std::vector<std::string> got;
        std::string after;
        for (int pages = 0; pages < 100; ++pages) {
          auto page = GroupPage(prefix, delim, after, max_keys, fetch(prefix));
          ASSERT_TRUE(page.ok());
          std::vector<std::string> entries;
          for (auto& m : page->objects) entries.push_back(m.name);
          for (auto& p : page->prefixes) entries.push_back(p);
          std::sort(entries.begin(), entries.end());
          ASSERT_LE(entries.size(), max_keys);
          got.insert(got.end(), entries.begin(), entries.end());
          if (!page->truncated) break;
          ASSERT_EQ(entries.size(), max_keys);  // truncated only when full
          after = page->last;
        }
        EXPECT_EQ(got, Model(keys, prefix, delim, "")) << "prefix=" << prefix << " delim=" << delim << " max=" << max_keys;
      }
    }
  }
}

}  // namespace
}  // namespace ais::s3
