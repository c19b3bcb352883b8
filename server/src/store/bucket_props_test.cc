// Bucket props persistence: the stored form round-trips, and a damaged BMD is an error at
// startup, never a throw (found by the bucket_props fuzz target).
#include "store/bucket_props.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/test_util.h"

namespace ais {
namespace {

TEST(BucketPropsTest, StoredFormRoundTrips) {
  BucketProps p;
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"chunks":{"objsize_limit":"4KiB","chunk_size":"1KiB"}})")).ok());
  p.created_ns = 1700000000000000000;
  p.bid = 42;
  auto back = BucketProps::FromStored(nlohmann::json::parse(p.ToStored().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToStored(), p.ToStored());
}

TEST(BucketPropsTest, RemotePropsApplyRoundTripAndShow) {
  BucketProps p;
  auto patch = nlohmann::json::parse(R"({"extra":{"aws":{"cloud_region":"eu-west-1","endpoint":"http://minio:9000",
      "profile":"p1","multipart_size":"8MiB"}},"versioning":{"validate_warm_get":true,"synchronize":true},
      "checksum":{"validate_cold_get":false},"features":"16384"})");
  ASSERT_TRUE(p.Apply(patch).ok());
  EXPECT_EQ(p.aws_region, "eu-west-1");
  EXPECT_EQ(p.aws_endpoint, "http://minio:9000");
  EXPECT_EQ(p.aws_profile, "p1");
  EXPECT_TRUE(p.remote_validate_warm_get);
  EXPECT_TRUE(p.remote_sync);
  EXPECT_FALSE(p.validate_cold_get);
  EXPECT_EQ(p.features, BucketProps::kFeatS3PathStyle);
  EXPECT_EQ(p.aws_multipart_size, 8 << 20);
  auto back = BucketProps::FromStored(nlohmann::json::parse(p.ToStored().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToStored(), p.ToStored());
  // As AIS shows it: the provider from the key, extra.aws only for a remote bucket.
  nlohmann::json shown = p.ToAisJson("aws/b", SpaceConfig{});
  EXPECT_EQ(shown["provider"], "aws");
  EXPECT_EQ(shown["extra"]["aws"]["cloud_region"], "eu-west-1");
  EXPECT_EQ(shown["features"], "16384");
  EXPECT_EQ(shown["extra"]["aws"]["multipart_size"], "8MiB");
  EXPECT_EQ(shown["versioning"]["synchronize"], true);
  EXPECT_EQ(p.ToAisJson("b", SpaceConfig{})["provider"], "ais");
  EXPECT_FALSE(p.ToAisJson("b", SpaceConfig{}).contains("extra"));
}

TEST(BucketPropsTest, BadRemotePropsAreRefusedNamingTheField) {
  for (const char* text : {R"({"features":"x"})", R"({"features":-1})", R"({"extra":{"aws":{"endpoint":5}}})",
                           R"({"versioning":{"synchronize":"yes"}})", R"({"extra":{"aws":{"nope":""}}})",
                           R"({"extra":{"aws":{"multipart_size":"4MiB"}}})", R"({"extra":{"aws":{"multipart_size":-2}}})",
                           R"({"extra":{"aws":{"multipart_size":"6GiB"}}})", R"({"extra":{"aws":{"multipart_size":true}}})"}) {
    BucketProps p;
    Status st = p.Apply(nlohmann::json::parse(text));
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << text;
  }
}

TEST(BucketPropsTest, MultipartSizeNeverAndDefault) {
  BucketProps p;
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"extra":{"aws":{"multipart_size":"-1"}}})")).ok());
  EXPECT_EQ(p.aws_multipart_size, -1);
  EXPECT_EQ(p.ToAisJson("aws/b", SpaceConfig{})["extra"]["aws"]["multipart_size"], "-1");
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"extra":{"aws":{"multipart_size":0}}})")).ok());
  EXPECT_EQ(p.aws_multipart_size, 0);
  EXPECT_FALSE(p.ToAisJson("aws/b", SpaceConfig{})["extra"]["aws"].contains("multipart_size"));
}

TEST(BucketPropsTest, DamagedStoredFormIsCorruption) {
  for (const char* text : {R"("x")", R"([1])", R"({"versioning":"yes"})", R"({"checksum_type":7})",
                           R"({"chunk_size":1e300})", R"({"checkpoint_every":-1})", R"({"created_ns":0.5})"}) {
    auto p = BucketProps::FromStored(nlohmann::json::parse(text));
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << text;
  }
}

TEST(BucketPropsTest, DamagedBmdFailsStoreOpen) {
  for (const char* bmd : {R"({"version":"1","buckets":{}})", R"({"version":1.5e300,"buckets":{}})",
                          R"({"version":2,"buckets":[]})", R"({"version":2,"buckets":{"b":{"bid":"x"}}})"}) {
    test::TempDir root;
    StoreOptions opts;
    opts.mountpaths = {root.Sub("mp1")};
    ASSERT_TRUE(Store::Open(opts).ok());  // creates the mountpath
    std::ofstream(root.Sub("mp1/.ais.bmd.json")) << bmd;
    auto s = Store::Open(opts);
    ASSERT_FALSE(s.ok()) << bmd;
    EXPECT_EQ(s.status().code(), Status::Code::kCorruption) << bmd << ": " << s.status().message();
  }
}

// EC is not built: refused, saying so (501), never accepted and ignored; what it shows (ec off)
// is accepted, so a document read back can be sent again.
TEST(BucketPropsTest, EcIsRefusedUntilBuilt) {
  BucketProps p;
  Status st = p.Apply(nlohmann::json::parse(R"({"ec":{"enabled":true}})"));
  EXPECT_EQ(st.code(), Status::Code::kNotSupported) << st.message();
  EXPECT_NE(st.message().find("not supported yet"), std::string::npos) << st.message();
  const nlohmann::json shown = p.ToAisJson("aws/b", SpaceConfig{});
  nlohmann::json again = {{"mirror", shown["mirror"]}, {"ec", shown["ec"]}, {"lru", shown["lru"]}};
  EXPECT_TRUE(p.Apply(again).ok());
}

// AIS MirrorConf: copies in [2, 32] once enabled (the error names the field); kept, shown and
// stored; copies() is 1 while disabled.
TEST(BucketPropsTest, MirrorIsValidatedKeptAndShown) {
  BucketProps p;
  for (const char* patch : {R"({"mirror":{"enabled":true}})", R"({"mirror":{"enabled":true,"copies":1}})",
                            R"({"mirror":{"enabled":true,"copies":33}})", R"({"mirror":{"copies":-1}})",
                            R"({"mirror":{"enabled":"yes"}})"}) {
    Status st = p.Apply(nlohmann::json::parse(patch));
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << patch << ": " << st.message();
    EXPECT_NE(st.message().find("mirror."), std::string::npos) << st.message();
  }
  EXPECT_EQ(p.copies(), 1u);
  EXPECT_FALSE(p.mirror_used);
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":3}})")).ok());
  EXPECT_EQ(p.copies(), 3u);
  EXPECT_TRUE(p.mirror_used);
  EXPECT_EQ(p.ToAisJson("b", SpaceConfig{})["mirror"]["copies"], 3);
  EXPECT_EQ(p.ToAisJson("b", SpaceConfig{})["mirror"]["enabled"], true);
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"mirror":{"enabled":false}})")).ok());
  EXPECT_EQ(p.copies(), 1u);
  auto back = BucketProps::FromStored(nlohmann::json::parse(p.ToStored().dump()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mirror_copies, 3u);
  EXPECT_FALSE(back->mirror_enabled);
  EXPECT_TRUE(back->mirror_used);
}

TEST(BucketPropsTest, LruEnabledIsKeptAndShown) {
  BucketProps p;
  EXPECT_TRUE(p.ToAisJson("aws/b", SpaceConfig{})["lru"]["enabled"]);   // a bucket from before: on
  EXPECT_FALSE(p.ToAisJson("b", SpaceConfig{})["lru"]["enabled"]);      // ais:// never
  ASSERT_TRUE(p.Apply(nlohmann::json::parse(R"({"lru":{"enabled":false}})")).ok());
  EXPECT_FALSE(p.ToAisJson("aws/b", SpaceConfig{})["lru"]["enabled"]);
  auto back = BucketProps::FromStored(nlohmann::json::parse(p.ToStored().dump()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->lru_enabled, std::optional<bool>(false));
  SpaceConfig c;
  c.dont_evict_time = std::chrono::hours(3);
  EXPECT_EQ(p.ToAisJson("aws/b", c)["lru"]["dont_evict_time"], "3h0m");
}

}  // namespace
}  // namespace ais
