#include <gtest/gtest.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "util/base64.h"
#include "auth/authorizer.h"
#include "auth/claims.h"
#include "auth/oidc.h"
#include "auth/token.h"

namespace ais::auth {
namespace {

constexpr int64_t kNow = 1800000000;

struct RsaKey {
  std::string private_pem;
  std::string public_pem;
};

RsaKey NewRsaKey() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  RsaKey out;
  BIO* priv = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(pub, key);
  char* data = nullptr;
  long n = BIO_get_mem_data(priv, &data);
  out.private_pem.assign(data, static_cast<size_t>(n));
  n = BIO_get_mem_data(pub, &data);
  out.public_pem.assign(data, static_cast<size_t>(n));
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return out;
}

const RsaKey& Rsa() {
  static const RsaKey key = NewRsaKey();
  return key;
}

// A token signed by libjwt with `alg` and `key`, with `claims` and an optional kid.
std::string Sign(jwt_alg_t alg, const std::string& key, const nlohmann::json& claims, const std::string& kid = "") {
  jwt_t* jwt = nullptr;
  jwt_new(&jwt);
  jwt_add_grants_json(jwt, claims.dump().c_str());
  if (!kid.empty()) jwt_add_header(jwt, "kid", kid.c_str());
  jwt_set_alg(jwt, alg, reinterpret_cast<const unsigned char*>(key.data()), static_cast<int>(key.size()));
  char* text = jwt_encode_str(jwt);
  std::string out = text ? text : "";
  free(text);
  jwt_free(jwt);
  return out;
}

std::string B64Url(std::string_view raw) {
  std::string s = EncodeBase64(raw);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

// A token assembled by hand (for the forgeries libjwt would not make): header, claims and an
// HMAC-SHA256 signature over them with `hmac_key` (or `sig` as given).
std::string Forge(const nlohmann::json& header, const nlohmann::json& claims, const std::string& hmac_key,
                  const std::string* sig = nullptr) {
  std::string input = B64Url(header.dump()) + "." + B64Url(claims.dump());
  if (sig) return input + "." + *sig;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), hmac_key.data(), static_cast<int>(hmac_key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), md, &n);
  return input + "." + B64Url(std::string(reinterpret_cast<char*>(md), n));
}

nlohmann::json Claims0(int64_t exp = kNow + 3600) {
  return {{"sub", "alice"}, {"exp", exp}, {"iat", kNow - 10}, {"admin", false}};
}

Result<Claims> VerifyWith(KeyProvider& keys, const std::string& token, std::vector<std::string> aud = {}) {
  return VerifyToken(token, keys, {.audiences = std::move(aud), .now = kNow});
}

std::unique_ptr<StaticKeyProvider> Hmac(const std::string& secret = "s3cret") {
  return std::move(*StaticKeyProvider::Make("HS256", secret));
}
std::unique_ptr<StaticKeyProvider> RsaProvider() { return std::move(*StaticKeyProvider::Make("RSA", Rsa().public_pem)); }

void ExpectInvalid(const Result<Claims>& r, std::string_view why) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnauthorized);
  EXPECT_NE(r.status().message().find("invalid token"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
}

TEST(Token, Hs256RoundTrip) {
  auto keys = Hmac();
  nlohmann::json c = Claims0();
  c["clusters"] = {{{"id", ""}, {"perm", "12288"}}};
  c["aud"] = "cl1";
  auto r = VerifyWith(*keys, Sign(JWT_ALG_HS256, "s3cret", c), {"cl1"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->sub, "alice");
  ASSERT_EQ(r->clusters.size(), 1u);
  EXPECT_EQ(r->clusters[0].perm, kClusterAccessRO);
}

TEST(Token, RsaRoundTripAllThreeDigests) {
  auto keys = RsaProvider();
  for (jwt_alg_t alg : {JWT_ALG_RS256, JWT_ALG_RS384, JWT_ALG_RS512}) {
    auto r = VerifyWith(*keys, Sign(alg, Rsa().private_pem, Claims0()));
    EXPECT_TRUE(r.ok()) << jwt_alg_str(alg) << ": " << r.status().message();
  }
}

TEST(Token, RejectsForgeries) {
  auto hmac = Hmac();
  auto rsa = RsaProvider();
  ExpectInvalid(VerifyWith(*hmac, Sign(JWT_ALG_HS256, "other", Claims0())), "signature is invalid");
  // alg none, with and without a signature.
  std::string empty;
  ExpectInvalid(VerifyWith(*hmac, Forge({{"alg", "none"}}, Claims0(), "", &empty)), "malformed signature");
  std::string junk = "AAAA";
  ExpectInvalid(VerifyWith(*hmac, Forge({{"alg", "none"}}, Claims0(), "", &junk)), "signing method none");
  // HS/RS confusion: an HS256 token keyed with the server's RSA public key.
  ExpectInvalid(VerifyWith(*rsa, Forge({{"alg", "HS256"}}, Claims0(), Rsa().public_pem)), "not configured");
  // RS token on an HMAC server; HS384/HS512 (AIS's parser refuses them).
  ExpectInvalid(VerifyWith(*hmac, Sign(JWT_ALG_RS256, Rsa().private_pem, Claims0())), "not configured");
  ExpectInvalid(VerifyWith(*hmac, Sign(JWT_ALG_HS512, "s3cret", Claims0())), "signing method HS512");
  ExpectInvalid(VerifyWith(*hmac, Forge({{"alg", "ES256"}}, Claims0(), "s3cret")), "signing method ES256");
  // A tampered payload keeps the old signature.
  std::string good = Sign(JWT_ALG_HS256, "s3cret", Claims0());
  nlohmann::json admin = Claims0();
  admin["admin"] = true;
  std::string tampered = B64Url(R"({"alg":"HS256","typ":"JWT"})") + "." + B64Url(admin.dump()) +
                         good.substr(good.rfind('.'));
  ExpectInvalid(VerifyWith(*hmac, tampered), "signature is invalid");
}

TEST(Token, RejectsMalformed) {
  auto keys = Hmac();
  const std::string good = Sign(JWT_ALG_HS256, "s3cret", Claims0());
  for (const std::string& bad : {std::string(""), std::string("abc"), std::string("a.b"), good + ".x",
                                 good + "=", std::string("!!.") + good.substr(good.find('.') + 1),
                                 good.substr(0, good.find('.')) + ".%%%." + "sig"}) {
    auto r = VerifyWith(*keys, bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kUnauthorized) << bad;
  }
  // Padding is not base64url (strict decoding).
  std::string header = B64Url(R"({"alg":"HS256"})");
  ExpectInvalid(VerifyWith(*keys, header + "==." + good.substr(good.find('.') + 1)), "malformed header");
}

TEST(Token, ChecksClaims) {
  auto keys = Hmac();
  auto sign = [](const nlohmann::json& c) { return Sign(JWT_ALG_HS256, "s3cret", c); };
  ExpectInvalid(VerifyWith(*keys, sign(Claims0(kNow - 1))), "token expired");
  ExpectInvalid(VerifyWith(*keys, sign(Claims0(kNow))), "token expired");  // no leeway
  nlohmann::json c = Claims0();
  c.erase("exp");
  ExpectInvalid(VerifyWith(*keys, sign(c)), "exp claim is required");
  c = Claims0();
  c["exp"] = "2027-01-01T00:00:00Z";  // the doc example's ISO date is not a NumericDate
  ExpectInvalid(VerifyWith(*keys, sign(c)), "must be a number");
  c = Claims0();
  c["nbf"] = kNow + 60;
  ExpectInvalid(VerifyWith(*keys, sign(c)), "not valid yet");
  c = Claims0();
  c.erase("sub");
  ExpectInvalid(VerifyWith(*keys, sign(c)), "missing 'sub' claim");
  c = Claims0();
  c["admin"] = "true";  // a string is not a bool
  ExpectInvalid(VerifyWith(*keys, sign(c)), "\"admin\" must be a bool");
  c = Claims0();
  c["clusters"] = {{{"id", ""}, {"perm", 12288}}};  // perm is a decimal string
  ExpectInvalid(VerifyWith(*keys, sign(c)), "decimal string");
  c = Claims0();
  c["aud"] = {"other", "x"};
  ExpectInvalid(VerifyWith(*keys, sign(c), {"mine"}), "invalid audience");
  EXPECT_TRUE(VerifyWith(*keys, sign(c), {"mine", "x"}).ok());
  c.erase("aud");
  ExpectInvalid(VerifyWith(*keys, sign(c), {"mine"}), "invalid audience");
}

TEST(Token, StaticKeyConfig) {
  EXPECT_FALSE(StaticKeyProvider::Make("HS256", "").ok());
  EXPECT_FALSE(StaticKeyProvider::Make("ES256", "k").ok());
  EXPECT_FALSE(StaticKeyProvider::Make("RSA", "not a key").ok());
  EXPECT_TRUE(StaticKeyProvider::Make("hmac", "k").ok());
  // Bare base64 DER is read too, and means the same key.
  std::string pem = Rsa().public_pem;
  std::string b64;
  std::istringstream in(pem);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("-----")) b64 += line;
  }
  auto der = NormalizeRsaPublicKey(b64);
  ASSERT_TRUE(der.ok()) << der.status().message();
  EXPECT_EQ(*der, *NormalizeRsaPublicKey(pem));
}

Claims Grants(std::vector<ClusterGrant> clusters, std::vector<BucketGrant> buckets = {}) {
  Claims c;
  c.sub = "bob";
  c.clusters = std::move(clusters);
  c.buckets = std::move(buckets);
  return c;
}

TEST(Permissions, ClusterAndBucketGrants) {
  const BucketRef data{.name = "data"};
  const BucketRef other{.name = "other"};
  // Cluster-wide read-write via the "any cluster" entry.
  Claims rw = Grants({{"", kAccessRW | kClusterAccessRO}});
  EXPECT_TRUE(CheckPermissions(rw, "U1", &data, kGet | kPut).ok());
  EXPECT_TRUE(CheckPermissions(rw, "U1", nullptr, kListBuckets).ok());
  Status st = CheckPermissions(rw, "U1", nullptr, kCreateBucket);
  EXPECT_EQ(st.code(), Status::Code::kForbidden);
  EXPECT_NE(st.message().find("user `bob` has insufficient permissions"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("CREATE-BUCKET"), std::string::npos);
  // An entry for this cluster wins over the "any" one; another cluster's does not apply.
  Claims two = Grants({{"", kAccessRO}, {"U1", kAccessRW}, {"U2", kAccessAll}});
  EXPECT_TRUE(CheckPermissions(two, "U1", &data, kPut).ok());
  EXPECT_FALSE(CheckPermissions(two, "U3", &data, kPut).ok());
  EXPECT_TRUE(CheckPermissions(two, "U3", &data, kGet).ok());
  // A bucket grant decides alone for its bucket, even narrowing the cluster's.
  Claims narrowed = Grants({{"U1", kAccessRW}}, {{.name = "data", .provider = "ais", .ns_uuid = "U1", .perm = kGet}});
  EXPECT_TRUE(CheckPermissions(narrowed, "U1", &data, kGet).ok());
  EXPECT_FALSE(CheckPermissions(narrowed, "U1", &data, kPut).ok());
  EXPECT_TRUE(CheckPermissions(narrowed, "U1", &other, kPut).ok());
  // ... and applies only in its own cluster's namespace.
  Claims foreign = Grants({}, {{.name = "data", .provider = "ais", .ns_uuid = "U9", .perm = kAccessRW}});
  EXPECT_FALSE(CheckPermissions(foreign, "U1", &data, kGet).ok());
  // No grants at all; admin.
  EXPECT_FALSE(CheckPermissions(Grants({}), "U1", &data, kGet).ok());
  Claims admin = Grants({});
  admin.admin = true;
  EXPECT_TRUE(CheckPermissions(admin, "U1", &data, kAccessAll).ok());
  // A system bucket also needs ADMIN; a cluster perm with the ADMIN bit grants admin-only calls.
  const BucketRef sys{.name = ".sys-inventory"};
  EXPECT_FALSE(CheckPermissions(rw, "U1", &sys, kGet).ok());
  EXPECT_TRUE(CheckPermissions(Grants({{"", kAccessRW | kAdmin}}), "U1", &sys, kGet).ok());
}

TEST(Authorizer, CachesRevokesAndNeedsBearer) {
  auto a = std::move(*Authorizer::Make({.required = true, .signature_method = "HS256", .signature_key = "k"}, nullptr));
  const std::string token = Sign(JWT_ALG_HS256, "k", Claims0());
  EXPECT_EQ(a->Authenticate("", "", kNow).status().message(), "token required");
  EXPECT_EQ(a->Authenticate("Basic abc", "", kNow).status().code(), Status::Code::kUnauthorized);
  EXPECT_EQ(a->Authenticate("Bearer ", "", kNow).status().code(), Status::Code::kUnauthorized);
  EXPECT_EQ(a->Authenticate("bearer " + token, "", kNow).status().code(), Status::Code::kUnauthorized);
  auto first = a->Authenticate("Bearer " + token, "", kNow);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = a->Authenticate("", token, kNow);  // X-Amz-Security-Token; from the cache
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get());
  EXPECT_NE(a->Authenticate("Bearer " + token, "", kNow + 3600).status().message().find("token expired"),
            std::string::npos);  // a cache hit still checks exp
  a->Revoke({token});
  EXPECT_EQ(a->Authenticate("Bearer " + token, "", kNow).status().message(), "invalid token [err: token revoked]");
}

TEST(Authorizer, Config) {
  EXPECT_FALSE(Authorizer::Make({.required = true}, nullptr).ok());  // no key
  auto off = Authorizer::Make({}, nullptr);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE((*off)->SetRequired(true).ok());
  auto hmac = std::move(*Authorizer::Make({.signature_method = "HS256", .signature_key = "k"}, nullptr));
  EXPECT_EQ(hmac->ConfigJson()["signature"]["key"], "**********");  // a secret is never shown
  // AuthN's registration check: the SHA-256 of the secret, or the same RSA key.
  EXPECT_TRUE(hmac->AcceptsKeyOf("8254c329a92850f6d539dd376f4816ee2764517da5e0235514af433164480d7a", ""));
  EXPECT_FALSE(hmac->AcceptsKeyOf("00", ""));
  auto rsa = std::move(*Authorizer::Make({.signature_method = "RSA", .signature_key = Rsa().public_pem}, nullptr));
  EXPECT_TRUE(rsa->AcceptsKeyOf("", Rsa().public_pem));
  EXPECT_FALSE(rsa->AcceptsKeyOf("", NewRsaKey().public_pem));
}

TEST(Oidc, ParsesJwksAndRejectsBadIssuers) {
  // The JWK of our test key, from its modulus and exponent.
  BIO* in = BIO_new_mem_buf(Rsa().public_pem.data(), static_cast<int>(Rsa().public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  BIGNUM *n = nullptr, *e = nullptr;
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n);
  EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e);
  auto bytes = [](const BIGNUM* bn) {
    std::string s(static_cast<size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(s.data()));
    return s;
  };
  nlohmann::json jwks = {{"keys",
                          {{{"kty", "RSA"}, {"kid", "k1"}, {"use", "sig"}, {"n", B64Url(bytes(n))}, {"e", B64Url(bytes(e))}},
                           {{"kty", "EC"}, {"kid", "k2"}},
                           {{"kty", "RSA"}, {"kid", "k3"}, {"use", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}}}}};
  BN_free(n);
  BN_free(e);
  EVP_PKEY_free(key);
  auto keys = ParseJwks(jwks.dump());
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ(keys->at("k1"), *NormalizeRsaPublicKey(Rsa().public_pem));
  EXPECT_FALSE(ParseJwks("[]").ok());
  EXPECT_FALSE(OidcKeyProvider::Make({.oidc_issuers = {"http://issuer.example"}}).ok());
  EXPECT_FALSE(OidcKeyProvider::Make({.oidc_issuers = {"https://"}}).ok());
}

}  // namespace
}  // namespace ais::auth
