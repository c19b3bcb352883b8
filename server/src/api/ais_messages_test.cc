#include "api/ais_messages.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

// blob-download's value (apc.BlobMsg): each field typed, a wrong type named.
TEST(BlobMsg, DecodesItsFieldsAndNamesAWrongOne) {
  auto ok = BlobMsg::Decode(nlohmann::json::parse(R"({"chunk-size": "1MiB", "num-workers": 2, "latest-ver": true})"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->chunk_size, 1u << 20);
  EXPECT_EQ(ok->num_workers, 2);
  EXPECT_TRUE(ok->latest);
  EXPECT_TRUE(BlobMsg::Decode(nlohmann::json::object()).ok());
  for (const char* bad : {R"("text")", R"({"chunk-size": true})", R"({"num-workers": "two"})",
                          R"({"num-workers": 5000})", R"({"latest-ver": "yes"})", R"({"nope": 1})"}) {
    auto r = BlobMsg::Decode(nlohmann::json::parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("value"), std::string::npos) << bad << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace ais
