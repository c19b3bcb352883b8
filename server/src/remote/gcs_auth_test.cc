// GCS: the environment's say (emulator, service account, project), the signed token request,
// object-name encoding and what is kept of an object resource.
#include "remote/gcs_auth.h"

#include <gtest/gtest.h>
#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "remote/gcs_client.h"
#include "util/base64.h"
#include "util/strings.h"
#include "util/test_util.h"

namespace ais {
namespace {

struct RsaKey {
  std::string private_pem, public_pem;
};

const RsaKey& Rsa() {
  static const RsaKey key = [] {
    EVP_PKEY* k = EVP_RSA_gen(2048);
    RsaKey out;
    BIO* priv = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(priv, k, nullptr, nullptr, 0, nullptr, nullptr);
    BIO* pub = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(pub, k);
    char* data = nullptr;
    long n = BIO_get_mem_data(priv, &data);
    out.private_pem.assign(data, static_cast<size_t>(n));
    n = BIO_get_mem_data(pub, &data);
    out.public_pem.assign(data, static_cast<size_t>(n));
    BIO_free(priv);
    BIO_free(pub);
    EVP_PKEY_free(k);
    return out;
  }();
  return key;
}

GetEnv EnvOf(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

nlohmann::json KeyFile(const std::string& project = "proj-1") {
  return {{"type", "service_account"},
          {"project_id", project},
          {"private_key_id", "kid-7"},
          {"private_key", Rsa().private_pem},
          {"client_email", "loader@proj-1.iam.gserviceaccount.com"},
          {"token_uri", "http://127.0.0.1:1/token"}};
}

TEST(GcsAuthTest, EmulatorHostMeansThatEndpointWithoutAuth) {
  auto s = ResolveGcsSettings(EnvOf({{"STORAGE_EMULATOR_HOST", "127.0.0.1:4443"}, {"GOOGLE_CLOUD_PROJECT", "p"}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->endpoint, "http://127.0.0.1:4443");
  EXPECT_TRUE(s->emulator);
  EXPECT_FALSE(s->account);
  EXPECT_EQ(s->project, "p");
  s = ResolveGcsSettings(EnvOf({{"STORAGE_EMULATOR_HOST", "https://gcs.local:9/"}}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->endpoint, "https://gcs.local:9");
  EXPECT_FALSE(ResolveGcsSettings(EnvOf({{"STORAGE_EMULATOR_HOST", "ftp://x"}})).ok());
}

TEST(GcsAuthTest, NeitherVariableIsAClearRefusal) {
  auto s = ResolveGcsSettings(EnvOf({{"GOOGLE_CLOUD_PROJECT", "p"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("GOOGLE_APPLICATION_CREDENTIALS"), std::string::npos);
  EXPECT_NE(s.status().message().find("STORAGE_EMULATOR_HOST"), std::string::npos);
}

TEST(GcsAuthTest, ServiceAccountFileAndProject) {
  test::TempDir dir;
  const std::string path = dir.path() + "/key.json";
  std::ofstream(path) << KeyFile().dump();
  auto s = ResolveGcsSettings(EnvOf({{"GOOGLE_APPLICATION_CREDENTIALS", path}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->endpoint, "https://storage.googleapis.com");
  ASSERT_TRUE(s->account);
  EXPECT_EQ(s->account->client_email, "loader@proj-1.iam.gserviceaccount.com");
  EXPECT_EQ(s->project, "proj-1");
  EXPECT_EQ(s->Describe().find("BEGIN"), std::string::npos) << "no key material in messages";
  s = ResolveGcsSettings(EnvOf({{"GOOGLE_APPLICATION_CREDENTIALS", path}, {"AIS_GCP_URL", "http://127.0.0.1:9/"}}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->endpoint, "http://127.0.0.1:9");
  EXPECT_TRUE(s->account) << "a custom endpoint keeps the service account's auth";
  EXPECT_FALSE(ResolveGcsSettings(EnvOf({{"GOOGLE_APPLICATION_CREDENTIALS", path}, {"AIS_GCP_URL", "x"}})).ok());
  // Both project sources, differing: refused as AIS refuses it.
  s = ResolveGcsSettings(EnvOf({{"GOOGLE_APPLICATION_CREDENTIALS", path}, {"GOOGLE_CLOUD_PROJECT", "other"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cannot be defined"), std::string::npos);
  // Missing or malformed files name the file.
  s = ResolveGcsSettings(EnvOf({{"GOOGLE_APPLICATION_CREDENTIALS", dir.path() + "/none.json"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("none.json"), std::string::npos);
  auto bad = KeyFile();
  bad["type"] = "authorized_user";
  EXPECT_FALSE(ParseServiceAccount(bad.dump(), "k").ok());
  bad = KeyFile();
  bad["project_id"] = 7;
  EXPECT_FALSE(ParseServiceAccount(bad.dump(), "k").ok());
  bad = KeyFile();
  bad.erase("client_email");
  EXPECT_FALSE(ParseServiceAccount(bad.dump(), "k").ok());
}

TEST(GcsAuthTest, TokenAssertionIsAnRs256JwtBearerGrant) {
  auto sa = ParseServiceAccount(KeyFile().dump(), "k");
  ASSERT_TRUE(sa.ok()) << sa.status().message();
  constexpr int64_t kNow = 1'800'000'000;
  auto assertion = MakeTokenAssertion(*sa, kNow);
  ASSERT_TRUE(assertion.ok()) << assertion.status().message();

  auto parts = Split(*assertion, '.');
  ASSERT_EQ(parts.size(), 3u);
  auto header = nlohmann::json::parse(DecodeBase64(parts[0]).value_or("?"), nullptr, false);
  auto claims = nlohmann::json::parse(DecodeBase64(parts[1]).value_or("?"), nullptr, false);
  EXPECT_EQ(header["alg"], "RS256");
  EXPECT_EQ(header["typ"], "JWT");
  EXPECT_EQ(header["kid"], "kid-7");
  EXPECT_EQ(claims["iss"], "loader@proj-1.iam.gserviceaccount.com");
  EXPECT_EQ(claims["scope"], "https://www.googleapis.com/auth/devstorage.full_control");
  EXPECT_EQ(claims["aud"], "http://127.0.0.1:1/token");
  EXPECT_EQ(claims["iat"], kNow);
  EXPECT_EQ(claims["exp"], kNow + 3600);

  // Signed by the key: the public half verifies it, another key does not.
  jwt_t* jwt = nullptr;
  const auto& pub = Rsa().public_pem;
  EXPECT_EQ(jwt_decode(&jwt, assertion->c_str(), reinterpret_cast<const unsigned char*>(pub.data()),
                       static_cast<int>(pub.size())),
            0);
  jwt_free(jwt);
  std::string forged = *assertion;
  forged[forged.size() - 5] = forged[forged.size() - 5] == 'A' ? 'B' : 'A';
  jwt = nullptr;
  EXPECT_NE(jwt_decode(&jwt, forged.c_str(), reinterpret_cast<const unsigned char*>(pub.data()),
                       static_cast<int>(pub.size())),
            0);
  jwt_free(jwt);

  EXPECT_EQ(TokenRequestBody("a.b-c_d"),
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b-c_d");
  sa->private_key = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  EXPECT_FALSE(MakeTokenAssertion(*sa, kNow).ok());
}

TEST(GcsAuthTest, ObjectNamesAreOnePercentEncodedSegment) {
  EXPECT_EQ(EncodeGcsObjectName("dir/a b+c"), "dir%2Fa%20b%2Bc");
  EXPECT_EQ(EncodeGcsObjectName("x~y_z-.q"), "x~y_z-.q");
  EXPECT_EQ(EncodeGcsObjectName("\xc3\xa9?#%&="), "%C3%A9%3F%23%25%26%3D");
}

TEST(GcsClientTest, KeepsWhatAisKeepsOfAnObject) {
  const nlohmann::json o = {{"name", "a/b"},
                            {"size", "11"},
                            {"etag", "CJiZ0Nfn7/ACEAE="},
                            {"md5Hash", "XrY7u+Ae7tCTyyK7j1rNww=="},  // MD5("hello world")
                            {"crc32c", "yZRlqg=="},
                            {"generation", "1700000000123456"},
                            {"updated", "2026-01-02T03:04:05.678Z"},
                            {"contentType", "text/plain"},
                            {"metadata", {{"x-goog-meta-ais-cksum-type", "xxhash2"}, {"Color", "blue"}}}};
  RemoteObjectAttrs a = GcsClient::AttrsFromResource(o);
  EXPECT_EQ(a.provider, "gcp");
  EXPECT_EQ(a.size, 11u);
  EXPECT_EQ(a.md5, "5eb63bbbe01eeed093cb22bb8f5acdc3");
  EXPECT_EQ(a.crc32c, "yZRlqg==");
  EXPECT_EQ(a.version, "1700000000123456");
  EXPECT_EQ(a.etag, "CJiZ0Nfn7/ACEAE=");
  EXPECT_EQ(a.last_modified, "Fri, 02 Jan 2026 03:04:05 GMT");
  EXPECT_EQ(a.mtime_ns, 1767323045678000000);
  EXPECT_EQ(a.content_type, "text/plain");
  ASSERT_EQ(a.user_meta.size(), 2u);
  EXPECT_EQ(a.user_meta[0], std::make_pair(std::string("color"), std::string("blue")));
  EXPECT_EQ(a.user_meta[1], std::make_pair(std::string("ais-cksum-type"), std::string("xxhash2")));
}

}  // namespace
}  // namespace ais
