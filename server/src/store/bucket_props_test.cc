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

}  // namespace
}  // namespace ais
