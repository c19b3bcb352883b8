#include "auth/oidc.h"

#include <curl/curl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "util/base64.h"
#include "util/ca_bundle.h"
#include "util/clock.h"
#include "util/log_ring.h"

namespace ais::auth {

namespace {

constexpr size_t kMaxDocument = 1 << 20;
constexpr size_t kMaxKid = 256;


bool IsHttpsUrl(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  if (!url.starts_with(kScheme)) return false;
  const std::string_view rest = std::string_view(url).substr(kScheme.size());
  const size_t host_end = rest.find_first_of("/?#");
  return host_end != 0 && !rest.empty();
}

// AIS's rule: a kid is short and holds none of the characters that could reach a path or a shell.
bool ValidKid(const std::string& kid) {
  return !kid.empty() && kid.size() <= kMaxKid && kid.find_first_of("/\\|;&$<>`'\"()") == std::string::npos;
}

size_t OnData(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > kMaxDocument) return 0;  // too large: the transfer fails
  body->append(data, size * n);
  return size * n;
}

// Aborts a transfer once `stop` (a const std::atomic<bool>*) is set: checked about once a second
// while a transfer waits, and at every progress.
int AbortOnStop(void* stop, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(stop)->load(std::memory_order_relaxed) ? 1 : 0;
}

// One GET of an https:// URL; its body on a 2xx.
Result<std::string> FetchHttps(const std::string& url, const std::string& ca_bundle, const std::atomic<bool>& stop) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> c(curl_easy_init(), &curl_easy_cleanup);
  if (!c) return Status::IOError("curl_easy_init failed");
  std::string body;
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c.get(), CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(c.get(), CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c.get(), CURLOPT_XFERINFOFUNCTION, &AbortOnStop);
  curl_easy_setopt(c.get(), CURLOPT_XFERINFODATA, &stop);
  if (!ca_bundle.empty()) {
    curl_easy_setopt(c.get(), CURLOPT_CAINFO, ca_bundle.c_str());
  } else {
    UseCaBundle(c.get());
  }
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, &OnData);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &body);
  CURLcode rc = curl_easy_perform(c.get());
  if (rc != CURLE_OK) return Status::Unavailable("GET " + url + ": " + curl_easy_strerror(rc));
  long code = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code >= 300) return Status::Unavailable("GET " + url + ": HTTP " + std::to_string(code));
  return body;
}

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};

// An RSA public key (modulus and exponent in base64url, as a JWK has them) as PEM.
Result<std::string> RsaPem(const std::string& n_b64, const std::string& e_b64) {
  auto n = DecodeBase64(n_b64), e = DecodeBase64(e_b64);
  if (!n || !e || n->empty() || e->empty()) return Status::InvalidArgument("bad RSA modulus or exponent");
  std::unique_ptr<BIGNUM, BnFree> bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()),
                                                 static_cast<int>(n->size()), nullptr));
  std::unique_ptr<BIGNUM, BnFree> bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()),
                                                 static_cast<int>(e->size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(), &OSSL_PARAM_BLD_free);
  if (!bn_n || !bn_e || !bld || !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
    return Status::InvalidArgument("bad RSA key");
  }
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(bld.get()), &OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr),
                                                                  &EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    return Status::InvalidArgument("bad RSA key");
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, &EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), &BIO_free);
  if (!out || !PEM_write_bio_PUBKEY(out.get(), key.get())) return Status::InvalidArgument("bad RSA key");
  char* data = nullptr;
  long len = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string StripSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Result<std::map<std::string, std::string>> ParseJwks(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("keys") || !j["keys"].is_array()) {
    return Status::InvalidArgument("not a JWKS (expecting {\"keys\": [...]})");
  }
  std::map<std::string, std::string> out;
  for (const auto& k : j["keys"]) {
    if (!k.is_object()) continue;
    auto str = [&k](const char* key) {
      auto it = k.find(key);
      return it != k.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (str("kty") != "RSA" || (!str("use").empty() && str("use") != "sig") || str("kid").empty()) continue;
    auto pem = RsaPem(str("n"), str("e"));
    if (pem.ok()) out[str("kid")] = std::move(*pem);
  }
  return out;
}

Result<std::unique_ptr<OidcKeyProvider>> OidcKeyProvider::Make(const AuthConfig& cfg) {
  for (const auto& iss : cfg.oidc_issuers) {
    if (!IsHttpsUrl(iss)) {
      return Status::InvalidArgument("auth: OIDC issuer \"" + iss + "\" must be an https:// URL with a host");
    }
  }
  if (cfg.min_rotation_refresh_s < 1 || cfg.min_background_refresh_s < 1) {
    return Status::InvalidArgument("auth: JWKS refresh intervals must be at least 1s");
  }
  std::unique_ptr<OidcKeyProvider> p(new OidcKeyProvider(cfg));
  p->refresher_ = std::thread([raw = p.get()] { raw->RefreshLoop(); });
  return p;
}

OidcKeyProvider::OidcKeyProvider(const AuthConfig& cfg)
    : ca_bundle_(cfg.oidc_ca_bundle),
      min_rotation_refresh_ns_(cfg.min_rotation_refresh_s * 1000000000),
      background_refresh_ns_(cfg.min_background_refresh_s * 1000000000) {
  for (const auto& iss : cfg.oidc_issuers) {
    auto issuer = std::make_unique<Issuer>();
    issuer->url = StripSlash(iss);
    issuers_.push_back(std::move(issuer));
  }
}

void OidcKeyProvider::Shutdown() {
  stopping_.store(true, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  stop_ = true;
  stop_cv_.notify_all();
}

OidcKeyProvider::~OidcKeyProvider() {
  Shutdown();
  stop_cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

Status OidcKeyProvider::Refresh(Issuer& issuer) {
  std::lock_guard fetching(issuer.fetch_mu);
  std::string jwks_uri;
  {
    std::lock_guard lock(mu_);
    jwks_uri = issuer.jwks_uri;
  }
  if (jwks_uri.empty()) {
    const std::string url = issuer.url + "/.well-known/openid-configuration";
    Result<std::string> doc = Status::Unavailable("not fetched");
    for (int attempt = 0; attempt < 4 && !stopping_.load(std::memory_order_relaxed); ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 << (attempt - 1)));
      doc = FetchHttps(url, ca_bundle_, stopping_);
      if (doc.ok()) break;
    }
    if (!doc.ok()) return doc.status();
    auto j = nlohmann::json::parse(*doc, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("jwks_uri") || !j["jwks_uri"].is_string() ||
        !IsHttpsUrl(j["jwks_uri"].get<std::string>())) {
      return Status::InvalidArgument(url + ": no https:// \"jwks_uri\" in the discovery document");
    }
    jwks_uri = j["jwks_uri"].get<std::string>();
  }
  auto text = FetchHttps(jwks_uri, ca_bundle_, stopping_);
  if (!text.ok()) return text.status();
  auto keys = ParseJwks(*text);
  if (!keys.ok()) return Status::InvalidArgument(jwks_uri + ": " + keys.status().message());
  std::lock_guard lock(mu_);
  issuer.jwks_uri = jwks_uri;
  issuer.keys = std::move(*keys);
  issuer.fetched = true;
  return Status::OK();
}

void OidcKeyProvider::RefreshLoop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    for (auto& issuer : issuers_) {
      if (Status st = Refresh(*issuer); !st.ok()) LogWarning("OIDC issuer " + issuer->url + ": " + st.message());
    }
    lock.lock();
    stop_cv_.wait_for(lock, std::chrono::nanoseconds(background_refresh_ns_), [this] { return stop_; });
  }
}

Result<OidcKeyProvider::Issuer*> OidcKeyProvider::IssuerOf(const TokenHeader& header, const Claims& claims) {
  if (header.alg == "HS256") return InvalidToken("HS256 signing key is not configured");
  if (claims.iss.empty()) return InvalidToken("missing 'iss' claim");
  const std::string iss = StripSlash(claims.iss);
  auto it = std::find_if(issuers_.begin(), issuers_.end(), [&](const auto& i) { return i->url == iss; });
  if (it == issuers_.end()) return InvalidToken("issuer \"" + claims.iss.substr(0, 128) + "\" is not trusted");
  if (header.kid.empty()) return InvalidToken("missing 'kid' in the token header");
  if (!ValidKid(header.kid)) return InvalidToken("invalid 'kid'");
  return it->get();
}

Result<VerifyKey> OidcKeyProvider::Find(const TokenHeader& header, const Claims& claims) {
  auto issuer = IssuerOf(header, claims);
  if (!issuer.ok()) return issuer.status();
  std::lock_guard lock(mu_);
  if (auto k = (*issuer)->keys.find(header.kid); k != (*issuer)->keys.end()) return VerifyKey{.material = k->second};
  if (!(*issuer)->fetched) return InvalidToken("cannot fetch the keys of issuer " + (*issuer)->url + " yet");
  return InvalidToken("unknown 'kid' \"" + header.kid + "\" of issuer " + (*issuer)->url);
}

bool OidcKeyProvider::MayFetch(const TokenHeader& header, const Claims& claims) {
  auto issuer = IssuerOf(header, claims);
  if (!issuer.ok()) return false;
  std::lock_guard lock(mu_);
  const Issuer& i = **issuer;
  if (i.keys.contains(header.kid)) return false;
  // Never fetched yet (the start's fetch may be under way), or a rotation the throttle allows.
  return !i.fetched || i.last_forced_ns < 0 || NowNs() - i.last_forced_ns >= min_rotation_refresh_ns_;
}

Status OidcKeyProvider::Fetch(const TokenHeader& header, const Claims& claims) {
  if (stopping_.load(std::memory_order_relaxed)) return Status::Unavailable("the server is stopping");
  auto found = IssuerOf(header, claims);
  if (!found.ok()) return found.status();
  Issuer& issuer = **found;
  { std::lock_guard in_flight(issuer.fetch_mu); }  // a fetch under way (the start's) may bring the kid
  {
    std::lock_guard lock(mu_);
    if (issuer.keys.contains(header.kid)) return Status::OK();
    const int64_t now = NowNs();
    if (issuer.last_forced_ns >= 0 && now - issuer.last_forced_ns < min_rotation_refresh_ns_) return Status::OK();
    issuer.last_forced_ns = now;
    issuer.fetched_before_forced = issuer.fetched;
  }
  // An unknown kid: the issuer may have rotated its key. One refresh, throttled above.
  Status refreshed = Refresh(issuer);
  std::lock_guard lock(mu_);
  // The issuer's first successful fetch (the start's prefetch was not done yet) is no rotation:
  // it does not hold back the refresh a real rotation needs.
  if (refreshed.ok() && !issuer.fetched_before_forced) issuer.last_forced_ns = -1;
  if (!refreshed.ok()) LogWarning("OIDC issuer " + issuer.url + ": " + refreshed.message());
  return refreshed;
}

}  // namespace ais::auth
