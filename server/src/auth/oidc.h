// OidcKeyProvider: the signing keys of trusted OIDC issuers (auth.oidc.allowed_iss).
//
// Per issuer: GET <issuer>/.well-known/openid-configuration -> jwks_uri (https), then the JWKS;
// RSA keys are kept by `kid`. A token's `iss` must be a trusted issuer and its `kid` one of that
// issuer's keys. An unknown kid forces one refresh of that issuer's JWKS (Fetch, which the router
// runs on a worker thread before the token is checked), at most once per min_rotation_refresh; a
// background thread refreshes every issuer each min_background_refresh. So an issuer may rotate
// its signing key while the server runs: a token signed with the new key is accepted on first
// sight. Find only looks up what is fetched: no I/O thread ever waits for an issuer. (AIS reads
// issuer keys once per process start; this does not.)
//
// Fetches use libcurl over HTTPS only, verified against the system CAs or auth.oidc.issuer_ca_bundle,
// 5 s to connect, 10 s per request, 1 MiB per document; discovery is tried 4 times with backoff.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/authorizer.h"
#include "auth/token.h"

namespace ais::auth {

class OidcKeyProvider : public KeyProvider {
 public:
  // kInvalidArgument for an issuer that is not an https:// URL with a host. Starts the refresher
  // (whose first round prefetches every issuer without delaying the caller).
  static Result<std::unique_ptr<OidcKeyProvider>> Make(const AuthConfig& cfg);
  ~OidcKeyProvider() override;

  Result<VerifyKey> Find(const TokenHeader& header, const Claims& claims) override;
  bool Fetches() const override { return true; }
  bool MayFetch(const TokenHeader& header, const Claims& claims) override;
  Status Fetch(const TokenHeader& header, const Claims& claims) override;
  void Shutdown() override;

 private:
  struct Issuer {
    std::string url;       // as configured, without a trailing '/'
    std::string jwks_uri;  // "" until discovered; guarded by mu_
    std::map<std::string, std::string> keys;  // kid -> RSA public key (PEM); guarded by mu_
    int64_t last_forced_ns = -1;              // guarded by mu_
    bool fetched = false;                     // a fetch succeeded once; guarded by mu_
    bool fetched_before_forced = false;       // `fetched` when last_forced_ns was set; guarded by mu_
    std::mutex fetch_mu;   // one fetch of this issuer at a time
  };

  explicit OidcKeyProvider(const AuthConfig& cfg);
  // The trusted issuer of a token with a well-formed kid, else kUnauthorized.
  Result<Issuer*> IssuerOf(const TokenHeader& header, const Claims& claims);
  // Discovers (once) and fetches the issuer's JWKS, replacing its keys.
  Status Refresh(Issuer& issuer);
  void RefreshLoop();

  const std::string ca_bundle_;
  const int64_t min_rotation_refresh_ns_;
  const int64_t background_refresh_ns_;
  std::vector<std::unique_ptr<Issuer>> issuers_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by mu_
  std::atomic<bool> stopping_{false};  // stop_ for the fetches in flight (they abort)
  std::thread refresher_;
};

// The JWKS document's RSA signing keys as kid -> PEM (keys of other types or uses are skipped).
// kInvalidArgument if it is not a JWKS.
Result<std::map<std::string, std::string>> ParseJwks(const std::string& text);

}  // namespace ais::auth
