// AisClusters: what remote-attach and remote-detach accept, refuse and keep (no remote answers
// here: port 1 on loopback refuses every connection, so each cluster stays "defunct").
#include "remote/ais_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/file.h"
#include "util/test_util.h"

namespace ais {
namespace {

constexpr const char* kNowhere = "http://127.0.0.1:1";

TEST(AisClusters, AttachValidatesAliasAndUrl) {
  AisClusters c;
  for (const char* alias : {"x", "what", "bad alias", "a..b", "slash/no"}) {
    Status st = c.Attach(alias, kNowhere);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << alias;
  }
  EXPECT_EQ(c.Attach("okay", "ftp://127.0.0.1:1").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(c.Attach("okay", "127.0.0.1:1").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.version(), 0);
}

TEST(AisClusters, UnreachableStaysAttachedAndDefunct) {
  AisClusters c;
  ASSERT_TRUE(c.Attach("far", std::string(kNowhere) + "/").ok());  // a trailing '/' is dropped
  EXPECT_EQ(c.ConfigJson(), nlohmann::json({{"far", {kNowhere}}}));
  auto shown = c.Show();
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_TRUE(shown[0].uuid.empty());
  EXPECT_TRUE(shown[0].smap.is_null());
  EXPECT_EQ(c.ResolveUuid("far").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(c.ResolveUuid("other").status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(c.KnownUuid("far").has_value());
  // the same alias and URL again: a refresh; another URL: refused
  EXPECT_TRUE(c.Attach("far", kNowhere).ok());
  EXPECT_EQ(c.Attach("far", "http://127.0.0.1:2").code(), Status::Code::kConflict);
  EXPECT_EQ(c.version(), 1);
  EXPECT_EQ(c.Detach("nope").code(), Status::Code::kNotFound);
  EXPECT_TRUE(c.Detach("far").ok());
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.version(), 2);
  EXPECT_EQ(c.Detach("far").code(), Status::Code::kNotFound);
}

TEST(AisClusters, KeptAcrossALoad) {
  test::TempDir dir;
  const std::string path = dir.path() + "/remote.json";
  {
    AisClusters c;
    ASSERT_TRUE(c.Load(path).ok());  // none yet
    ASSERT_TRUE(c.Attach("one", kNowhere).ok());
    ASSERT_TRUE(c.Attach("two", "http://127.0.0.1:1/x").ok());
    ASSERT_TRUE(c.Detach("one").ok());
  }
  AisClusters again;
  ASSERT_TRUE(again.Load(path).ok());
  EXPECT_EQ(again.ConfigJson(), nlohmann::json({{"two", {"http://127.0.0.1:1/x"}}}));
  ASSERT_TRUE(AtomicWriteFile(path, "not json", false).ok());
  AisClusters broken;
  EXPECT_FALSE(broken.Load(path).ok());
}

TEST(AisBucketArg, NamesTheRemotesNamespace) {
  EXPECT_EQ(AisBucketArg("ais/@U1#/b"), "b");
  EXPECT_EQ(AisBucketArg("ais/@U1#ns/b"), "ns/b");
}

}  // namespace
}  // namespace ais
