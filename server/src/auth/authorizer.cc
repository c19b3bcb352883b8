#include "auth/authorizer.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

namespace ais::auth {

namespace {

constexpr size_t kMaxCachedTokens = 100000;  // beyond: expired ones go, then all (re-verified on use)

// The token this thread verified last, and its claims: a connection sends the same token request
// after request, and comparing it with the last one costs less than hashing it for the cache and
// taking the cache's lock. Valid for the authorizer `owner` while its revocation epoch is
// `epoch`.
struct LastToken {
  uint64_t owner = 0;
  uint64_t epoch = 0;
  std::string token;
  std::shared_ptr<const Claims> claims;
};
thread_local LastToken t_last;

std::atomic<uint64_t> g_next_id{1};

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

// The token a request carries: "Authorization: Bearer <jwt>", else the S3 session token.
std::string_view TokenOf(std::string_view authorization, std::string_view amz_token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.starts_with(kScheme)) return authorization.substr(kScheme.size());
  return amz_token;  // S3 clients: Authorization holds their SigV4 signature
}

}  // namespace

Result<std::unique_ptr<Authorizer>> Authorizer::Make(AuthConfig cfg, std::unique_ptr<KeyProvider> oidc) {
  std::unique_ptr<KeyProvider> keys;
  if (!cfg.signature_key.empty()) {
    if (oidc) {
      return Status::InvalidArgument(
          "auth: configure either a signature key or trusted OIDC issuers, not both");
    }
    if (cfg.signature_method.empty()) return Status::InvalidArgument("auth: signature.method is required with a key");
    auto made = StaticKeyProvider::Make(cfg.signature_method, cfg.signature_key);
    if (!made.ok()) return made.status();
    keys = std::move(*made);
  } else if (oidc) {
    keys = std::move(oidc);
  }
  std::unique_ptr<Authorizer> a(new Authorizer(std::move(cfg), std::move(keys)));
  if (Status st = a->SetRequired(a->cfg_.required); !st.ok()) return st;
  return a;
}

Authorizer::Authorizer(AuthConfig cfg, std::unique_ptr<KeyProvider> keys)
    : cfg_(std::move(cfg)), keys_(std::move(keys)), id_(g_next_id.fetch_add(1)) {}

Status Authorizer::SetRequired(bool on) {
  if (on && !keys_) {
    return Status::InvalidArgument(
        "auth: requiring tokens needs a signing key (AIS_AUTHN_SECRET_KEY, AIS_AUTHN_PUBLIC_KEY) or trusted OIDC "
        "issuers (--auth-oidc-issuer)");
  }
  required_.store(on, std::memory_order_relaxed);
  return Status::OK();
}

std::function<Status()> Authorizer::KeyFetchFor(std::string_view authorization, std::string_view amz_token) {
  if (!fetches_keys()) return nullptr;
  const std::string_view token = TokenOf(authorization, amz_token);
  if (token.empty() || (t_last.owner == id_ && t_last.token == token)) return nullptr;
  {
    std::shared_lock lock(mu_);
    if (cache_.contains(std::string(token)) || revoked_.contains(std::string(token))) return nullptr;
  }
  auto parsed = ParseToken(token);
  if (!parsed.ok() || !keys_->MayFetch(parsed->header, parsed->claims)) return nullptr;
  return [keys = keys_.get(), t = std::move(*parsed)] { return keys->Fetch(t.header, t.claims); };
}

Result<std::shared_ptr<const Claims>> Authorizer::Authenticate(std::string_view authorization,
                                                               std::string_view amz_token, int64_t now_s) {
  const std::string_view token = TokenOf(authorization, amz_token);
  if (token.empty()) {
    return Status::Unauthorized(authorization.empty() ? "token required"
                                                      : "token required (expecting \"Authorization: Bearer <token>\")");
  }
  const uint64_t epoch = revocations_.load(std::memory_order_acquire);
  if (t_last.owner == id_ && t_last.epoch == epoch && t_last.token == token) {
    if (now_s >= t_last.claims->exp) return Status::Unauthorized("invalid token [err: token expired]");
    return t_last.claims;
  }
  auto claims = Verify(std::string(token), now_s);
  if (claims.ok()) t_last = {.owner = id_, .epoch = epoch, .token = std::string(token), .claims = *claims};
  return claims;
}

Result<std::shared_ptr<const Claims>> Authorizer::Verify(const std::string& token, int64_t now_s) {
  {
    std::shared_lock lock(mu_);
    if (revoked_.contains(token)) return Status::Unauthorized("invalid token [err: token revoked]");
    if (auto it = cache_.find(token); it != cache_.end()) {
      if (now_s >= it->second->exp) return Status::Unauthorized("invalid token [err: token expired]");
      return it->second;
    }
  }
  if (!keys_) return Status::Unauthorized("invalid token [err: no signing key is configured]");
  auto claims = VerifyToken(token, *keys_, {.audiences = cfg_.audiences, .now = now_s});
  if (!claims.ok()) return claims.status();
  auto shared = std::make_shared<const Claims>(std::move(*claims));
  std::unique_lock lock(mu_);
  if (revoked_.contains(token)) return Status::Unauthorized("invalid token [err: token revoked]");
  if (cache_.size() >= kMaxCachedTokens) {
    std::erase_if(cache_, [now_s](const auto& e) { return now_s >= e.second->exp; });
    if (cache_.size() >= kMaxCachedTokens) cache_.clear();
  }
  cache_.emplace(token, shared);
  return shared;
}

bool Authorizer::AcceptsKeyOf(const std::string& secret_sha256_hex, const std::string& public_key_pem) const {
  const auto* key = dynamic_cast<const StaticKeyProvider*>(keys_.get());
  if (!key) return true;
  if (key->hmac()) return public_key_pem.empty() && secret_sha256_hex == Sha256Hex(key->key().material);
  if (public_key_pem.empty()) return false;
  auto pem = NormalizeRsaPublicKey(public_key_pem);
  return pem.ok() && *pem == key->key().material;
}

void Authorizer::Revoke(const std::vector<std::string>& tokens) {
  std::unique_lock lock(mu_);
  for (const auto& t : tokens) {
    if (t.empty()) continue;
    revoked_.insert(t);
    cache_.erase(t);
  }
  revocations_.fetch_add(1, std::memory_order_release);  // every thread's LastToken is stale now
}

nlohmann::json Authorizer::ConfigJson() const {
  const auto* key = dynamic_cast<const StaticKeyProvider*>(keys_.get());
  const bool hmac = key && key->hmac();
  nlohmann::json sig = nlohmann::json::object();
  if (!cfg_.signature_key.empty()) {
    sig = {{"key", hmac ? "**********" : cfg_.signature_key}, {"method", cfg_.signature_method}};
  }
  nlohmann::json oidc = {{"allowed_iss", cfg_.oidc_issuers}};
  if (!cfg_.oidc_ca_bundle.empty()) oidc["issuer_ca_bundle"] = cfg_.oidc_ca_bundle;
  oidc["jwks_cache"] = {{"min_rotation_refresh", std::to_string(cfg_.min_rotation_refresh_s) + "s"},
                        {"min_background_refresh", std::to_string(cfg_.min_background_refresh_s) + "s"}};
  return {{"client_auth_required", required()},
          {"enabled", required()},  // the pre-5.0 name, still read by older clients
          {"signature", sig},
          {"required_claims", {{"aud", cfg_.audiences}}},
          {"oidc", oidc}};
}

}  // namespace ais::auth
