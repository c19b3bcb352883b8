// Authorizer: the server's access control state: whether tokens are required, how they are
// verified (a static key or trusted OIDC issuers), the cache of verified tokens, the revoked set.
// Thread-safe; one per server, owned by main.
//
// A request's bearer token is verified once: the claims are cached under the raw token text, and
// a cache hit only checks `exp` again (as AIS does). Revoked tokens are refused before the cache.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "auth/claims.h"
#include "auth/token.h"
#include "util/status.h"

namespace ais::auth {

// The `auth` section of the cluster config, as AIS names it (cmn.AuthConf).
struct AuthConfig {
  bool required = false;                 // auth.client_auth_required
  std::string signature_method{};          // auth.signature.method
  std::string signature_key{};             // auth.signature.key
  std::vector<std::string> audiences{};    // auth.required_claims.aud
  std::vector<std::string> oidc_issuers{}; // auth.oidc.allowed_iss
  std::string oidc_ca_bundle{};            // auth.oidc.issuer_ca_bundle
  int64_t min_rotation_refresh_s = 30;   // auth.oidc.jwks_cache.min_rotation_refresh
  int64_t min_background_refresh_s = 900;  // auth.oidc.jwks_cache.min_background_refresh
};

class Authorizer {
 public:
  // Validates `cfg` (with tokens required, exactly one of a signature key or OIDC issuers) and
  // builds its key provider. `oidc` is the provider for cfg.oidc_issuers (auth/oidc.h), made by
  // the caller; null when there are none.
  static Result<std::unique_ptr<Authorizer>> Make(AuthConfig cfg, std::unique_ptr<KeyProvider> oidc);

  bool required() const { return required_.load(std::memory_order_relaxed); }
  // auth.client_auth_required at run time. kInvalidArgument when turning it on with no key.
  Status SetRequired(bool on);
  bool has_keys() const { return keys_ != nullptr; }

  // The claims of the request's token: `authorization` is the Authorization header ("Bearer
  // <jwt>"), else `amz_token`, X-Amz-Security-Token (S3 clients, whose Authorization is their
  // signature). kUnauthorized with AIS's wording: "token required", "invalid token [err: ...]".
  Result<std::shared_ptr<const Claims>> Authenticate(std::string_view authorization, std::string_view amz_token,
                                                     int64_t now_s);
  // The blocking work Authenticate would need first for this token: fetching its key (an OIDC
  // issuer's keys not fetched yet, or rotated). Null when there is none (the usual case: a token
  // already verified, or a key at hand). The router runs it on a worker thread, never an I/O one.
  std::function<Status()> KeyFetchFor(std::string_view authorization, std::string_view amz_token);
  // False when KeyFetchFor never has work (a static key): callers skip it.
  bool fetches_keys() const { return keys_ && keys_->Fetches(); }
  // The server is stopping: key fetches in flight end now (KeyProvider::Shutdown).
  void Shutdown() {
    if (keys_) keys_->Shutdown();
  }
  // Verifies a token as Authenticate does (POST /v1/tokens: "does this cluster accept it?").
  Result<std::shared_ptr<const Claims>> Verify(const std::string& token, int64_t now_s);
  // AuthN's registration check: false if this server verifies with a key other than the one
  // described (the hex SHA-256 of an HMAC secret, or an RSA public key in PEM); true if it is the
  // same, or if there is nothing to compare (no static key: none configured, or OIDC issuers).
  bool AcceptsKeyOf(const std::string& secret_sha256_hex, const std::string& public_key_pem) const;
  // Adds tokens to the revoked set (DELETE /v1/tokens, pushed by AuthN).
  void Revoke(const std::vector<std::string>& tokens);

  // The config section as GET config shows it: an HMAC secret censored, an RSA key shown.
  nlohmann::json ConfigJson() const;

 private:
  Authorizer(AuthConfig cfg, std::unique_ptr<KeyProvider> keys);

  const AuthConfig cfg_;
  const std::unique_ptr<KeyProvider> keys_;  // null: no key configured
  const uint64_t id_;  // tells this authorizer's thread-local last token from another's
  std::atomic<bool> required_{false};
  std::atomic<uint64_t> revocations_{0};  // bumped by every Revoke
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Claims>> cache_;  // guarded by mu_
  std::unordered_set<std::string> revoked_;                               // guarded by mu_
};

}  // namespace ais::auth
