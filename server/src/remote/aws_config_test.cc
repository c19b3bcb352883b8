// Where S3 calls go and as whom: per-bucket props, then the environment, then the shared files.
#include "remote/aws_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "remote/s3_client.h"
#include "util/test_util.h"

namespace ais {
namespace {

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv() {
    for (const char* k : kKeys) {
      const char* v = std::getenv(k);
      saved_.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(k);
    }
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_) {
      if (v) ::setenv(k, v->c_str(), 1);
      else ::unsetenv(k);
    }
  }
  void Set(const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); }

 private:
  static constexpr const char* kKeys[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                          "AWS_PROFILE",       "AWS_REGION",            "AWS_DEFAULT_REGION",
                                          "S3_ENDPOINT",       "AIS_S3_CONFIG_DIR",     "AWS_CONFIG_FILE",
                                          "AWS_SHARED_CREDENTIALS_FILE", "HOME"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST(AwsConfigTest, EnvironmentWithDefaults) {
  ScopedEnv env;
  test::TempDir home;
  env.Set("HOME", home.path());
  env.Set("AWS_ACCESS_KEY_ID", "AKID");
  env.Set("AWS_SECRET_ACCESS_KEY", "SECRET");
  auto s = ResolveAwsSettings({});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->access_key, "AKID");
  EXPECT_EQ(s->region, "us-east-1");
  EXPECT_TRUE(s->endpoint.empty());
  EXPECT_FALSE(s->path_style);
  EXPECT_EQ(s->Describe().find("SECRET"), std::string::npos) << "credentials never appear in messages";
  env.Set("S3_ENDPOINT", "127.0.0.1:9000/");
  s = ResolveAwsSettings({});
  EXPECT_EQ(s->endpoint, "https://127.0.0.1:9000");
  EXPECT_TRUE(s->path_style) << "a custom endpoint is addressed path-style";
}

TEST(AwsConfigTest, BucketPropsWinAndNamedProfilesReadTheSharedFiles) {
  ScopedEnv env;
  test::TempDir dir;
  std::ofstream(dir.path() + "/my-credentials") << "[default]\naws_access_key_id = DEF\naws_secret_access_key = d\n"
                                                << "[team]\naws_access_key_id = TEAM\naws_secret_access_key = t\n";
  std::ofstream(dir.path() + "/my-config") << "[profile team]\nregion = eu-central-1\n";
  env.Set("AIS_S3_CONFIG_DIR", dir.path());
  env.Set("AWS_ACCESS_KEY_ID", "ENVKEY");
  env.Set("AWS_SECRET_ACCESS_KEY", "ENVSECRET");
  env.Set("S3_ENDPOINT", "http://env:1");
  auto s = ResolveAwsSettings({.profile = "team", .endpoint = "http://bucket:2", .region = "", .path_style = false});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->access_key, "TEAM") << "a bucket's own profile is not overridden by the environment";
  EXPECT_EQ(s->region, "eu-central-1");
  EXPECT_EQ(s->endpoint, "http://bucket:2");
  s = ResolveAwsSettings({.profile = "", .endpoint = "", .region = "ap-south-1", .path_style = false});
  EXPECT_EQ(s->access_key, "ENVKEY");
  EXPECT_EQ(s->region, "ap-south-1");
  EXPECT_EQ(s->endpoint, "http://env:1");
  auto missing = ResolveAwsSettings({.profile = "nobody", .endpoint = "", .region = "", .path_style = false});
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
}

TEST(S3ClientTest, EncodesKeysAsS3Does) {
  EXPECT_EQ(S3Client::EncodePath("a/b c/d+e"), "a/b%20c/d%2Be");
  EXPECT_EQ(S3Client::EncodePath("x~y_z-.q"), "x~y_z-.q");
  EXPECT_EQ(S3Client::EncodePath("\xc3\xa9/%"), "%C3%A9/%25");
}

}  // namespace
}  // namespace ais
