// Token verification: a compact JWS (header.payload.signature, strict base64url) signed HS256 or
// RS256/384/512, its signature checked by libjwt with a key a KeyProvider picks, then the claims
// (exp, nbf, sub, aud) as AIS checks them. Every rejection is kUnauthorized with AIS's wording
// ("invalid token [err: ...]").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/claims.h"
#include "util/status.h"

namespace ais::auth {

// What the token's header says, for a KeyProvider to choose the key by.
struct TokenHeader {
  std::string alg;  // "HS256", "RS256", "RS384" or "RS512" (anything else is refused before)
  std::string kid;  // "" when absent
};

// A verifying key: an HMAC secret (raw bytes) or an RSA public key in PEM.
struct VerifyKey {
  bool hmac = false;
  std::string material;
};

class KeyProvider {
 public:
  virtual ~KeyProvider() = default;
  // The key that must have signed a token with this header and these (not yet verified) claims;
  // kUnauthorized if there is none (an untrusted issuer, an unknown kid, an algorithm this
  // provider does not take).
  // Never blocks (it runs on I/O threads).
  virtual Result<VerifyKey> Find(const TokenHeader& header, const Claims& claims) = 0;
  // Whether this provider fetches keys at all (a static key never does: nothing to ask it).
  virtual bool Fetches() const { return false; }
  // Whether Fetch might bring a key Find does not have now (an OIDC issuer's keys not fetched yet,
  // or rotated). Never blocks.
  virtual bool MayFetch(const TokenHeader& /*header*/, const Claims& /*claims*/) { return false; }
  // Fetches what MayFetch said might help. Blocks on the network: run it off I/O threads.
  virtual Status Fetch(const TokenHeader& /*header*/, const Claims& /*claims*/) { return Status::OK(); }
  // Ends the fetches in flight (they fail) and refuses new ones: the server is stopping.
  virtual void Shutdown() {}
};

// A well-formed token's header and claims, not verified: what chooses (or fetches) its key.
struct UnverifiedToken {
  TokenHeader header;
  Claims claims;
};
Result<UnverifiedToken> ParseToken(std::string_view token);

// kUnauthorized "invalid token [err: <why>]", as AIS words every rejected token.
Status InvalidToken(const std::string& why);

// One static key, as AIS's auth.signature (or AIS_AUTHN_SECRET_KEY / AIS_AUTHN_PUBLIC_KEY).
class StaticKeyProvider : public KeyProvider {
 public:
  // `method`: HMAC, HS256, HS384, HS512, RSA, RS256, RS384, RS512 (any case). For RSA `key` is
  // a PEM public key or bare base64 DER; for HMAC, the secret. kInvalidArgument if unusable.
  static Result<std::unique_ptr<StaticKeyProvider>> Make(std::string_view method, std::string key);
  Result<VerifyKey> Find(const TokenHeader& header, const Claims& claims) override;
  bool hmac() const { return key_.hmac; }
  const VerifyKey& key() const { return key_; }

 private:
  explicit StaticKeyProvider(VerifyKey key) : key_(std::move(key)) {}
  VerifyKey key_;
};

// An RSA public key (PEM "PUBLIC KEY" or "RSA PUBLIC KEY", or bare base64 DER) as PEM
// "PUBLIC KEY"; kInvalidArgument if OpenSSL cannot read it.
Result<std::string> NormalizeRsaPublicKey(std::string_view text);

struct VerifyOptions {
  std::vector<std::string> audiences;  // non-empty: the token's aud must hold one of them
  int64_t now = 0;                     // seconds since the epoch
};

// Verifies `token` and returns its claims.
Result<Claims> VerifyToken(std::string_view token, KeyProvider& keys, const VerifyOptions& opts);

}  // namespace ais::auth
