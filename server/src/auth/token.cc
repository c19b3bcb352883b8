#include "auth/token.h"

#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "util/base64.h"

namespace ais::auth {

namespace {


// Strict base64url (RFC 7515): the URL-safe alphabet, no padding, no whitespace.
bool IsBase64Url(std::string_view s) {
  if (s.empty() || s.size() % 4 == 1) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

Result<nlohmann::json> DecodeSegment(std::string_view seg, const char* what) {
  if (!IsBase64Url(seg)) return InvalidToken(std::string("malformed ") + what + " (not base64url)");
  auto raw = DecodeBase64(seg);
  if (!raw) return InvalidToken(std::string("malformed ") + what + " (not base64url)");
  auto j = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidToken(std::string("malformed ") + what + " (not a JSON object)");
  return j;
}

bool IsRsa(std::string_view alg) { return alg == "RS256" || alg == "RS384" || alg == "RS512"; }

struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

}  // namespace

Result<std::string> NormalizeRsaPublicKey(std::string_view text) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
  if (text.find("-----BEGIN") != std::string_view::npos) {
    std::unique_ptr<BIO, BioFree> in(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    key.reset(PEM_read_bio_PUBKEY(in.get(), nullptr, nullptr, nullptr));
  } else {
    std::string compact;
    for (char c : text) {
      if (!std::isspace(static_cast<unsigned char>(c))) compact.push_back(c);
    }
    if (auto der = DecodeBase64(compact)) {
      const auto* p = reinterpret_cast<const unsigned char*>(der->data());
      key.reset(d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size())));
    }
  }
  if (!key || !EVP_PKEY_is_a(key.get(), "RSA")) {
    return Status::InvalidArgument("not an RSA public key (expecting PEM \"PUBLIC KEY\" or base64 DER)");
  }
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PUBKEY(out.get(), key.get())) return Status::InvalidArgument("cannot encode the RSA key");
  char* data = nullptr;
  long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::unique_ptr<StaticKeyProvider>> StaticKeyProvider::Make(std::string_view method, std::string key) {
  std::string m(method);
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::toupper(c); });
  if (key.empty()) return Status::InvalidArgument("auth: empty signing key");
  if (m == "HMAC" || m == "HS256" || m == "HS384" || m == "HS512") {
    return std::unique_ptr<StaticKeyProvider>(new StaticKeyProvider({.hmac = true, .material = std::move(key)}));
  }
  if (m == "RSA" || m == "RS256" || m == "RS384" || m == "RS512") {
    auto pem = NormalizeRsaPublicKey(key);
    if (!pem.ok()) return Status::InvalidArgument("auth: " + pem.status().message());
    return std::unique_ptr<StaticKeyProvider>(new StaticKeyProvider({.hmac = false, .material = std::move(*pem)}));
  }
  return Status::InvalidArgument("auth: invalid signature method \"" + std::string(method) +
                                 "\" (expecting HMAC, HS256, RSA, RS256, RS384 or RS512)");
}

Result<VerifyKey> StaticKeyProvider::Find(const TokenHeader& header, const Claims&) {
  // A key serves only its own family: an RSA public key is never taken as an HMAC secret.
  if (key_.hmac && header.alg != "HS256") return InvalidToken(header.alg + " signing key is not configured");
  if (!key_.hmac && !IsRsa(header.alg)) return InvalidToken(header.alg + " signing key is not configured");
  return key_;
}

Status InvalidToken(const std::string& why) { return Status::Unauthorized("invalid token [err: " + why + "]"); }

Result<UnverifiedToken> ParseToken(std::string_view token) {
  const size_t d1 = token.find('.');
  const size_t d2 = d1 == std::string_view::npos ? d1 : token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) {
    return InvalidToken("token is malformed: expecting header.payload.signature");
  }
  auto header_json = DecodeSegment(token.substr(0, d1), "header");
  if (!header_json.ok()) return header_json.status();
  auto payload = DecodeSegment(token.substr(d1 + 1, d2 - d1 - 1), "payload");
  if (!payload.ok()) return payload.status();
  if (!IsBase64Url(token.substr(d2 + 1))) return InvalidToken("malformed signature (not base64url)");

  TokenHeader header;
  auto alg = header_json->find("alg");
  if (alg == header_json->end() || !alg->is_string()) return InvalidToken("missing \"alg\" in the header");
  header.alg = alg->get<std::string>();
  if (header.alg != "HS256" && !IsRsa(header.alg)) {
    return InvalidToken("signing method " + header.alg.substr(0, 16) + " is invalid");
  }
  if (auto kid = header_json->find("kid"); kid != header_json->end() && !kid->is_null()) {
    if (!kid->is_string()) return InvalidToken("\"kid\" must be a string");
    header.kid = kid->get<std::string>();
  }
  auto claims = Claims::Decode(*payload);
  if (!claims.ok()) return claims.status();
  return UnverifiedToken{.header = std::move(header), .claims = std::move(*claims)};
}

Result<Claims> VerifyToken(std::string_view token, KeyProvider& keys, const VerifyOptions& opts) {
  auto parsed = ParseToken(token);
  if (!parsed.ok()) return parsed.status();
  const TokenHeader& header = parsed->header;
  Claims* claims = &parsed->claims;
  auto key = keys.Find(header, *claims);
  if (!key.ok()) return key.status();
  jwt_t* raw = nullptr;
  const std::string text(token);
  int rc = jwt_decode(&raw, text.c_str(), reinterpret_cast<const unsigned char*>(key->material.data()),
                      static_cast<int>(key->material.size()));
  std::unique_ptr<jwt_t, JwtFree> jwt(raw);
  if (rc != 0 || !jwt) return InvalidToken("signature is invalid");
  // libjwt verified with the algorithm of the header we read: make sure it read the same one.
  if (std::string_view(jwt_alg_str(jwt_get_alg(jwt.get()))) != header.alg) return InvalidToken("signature is invalid");

  if (opts.now >= claims->exp) return InvalidToken("token expired");
  if (claims->has_nbf && claims->nbf > opts.now) return InvalidToken("token is not valid yet");
  if (!opts.audiences.empty()) {
    bool match = std::any_of(claims->aud.begin(), claims->aud.end(), [&](const std::string& a) {
      return std::find(opts.audiences.begin(), opts.audiences.end(), a) != opts.audiences.end();
    });
    if (!match) return InvalidToken("token has invalid audience");
  }
  return std::move(*claims);
}

}  // namespace ais::auth
