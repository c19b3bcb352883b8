// Where GCS requests go and how they are authorized, decided from the environment as Google's
// client libraries decide it:
//   STORAGE_EMULATOR_HOST           an emulator at that host ("host:port" or a URL): no auth;
//   GOOGLE_APPLICATION_CREDENTIALS  a service-account key file: requests carry an OAuth 2.0
//                                   access token, got by a JWT bearer grant (RFC 7523) signed
//                                   RS256 with the key and exchanged at the key's token_uri;
//   GOOGLE_CLOUD_PROJECT            the project of bucket listings (else the key's project_id;
//                                   both set and different is an error, as AIS has it);
//   AIS_GCP_URL                     (ours) another endpoint for the service account's requests,
//                                   e.g. a private gateway; the default is storage.googleapis.com.
// Neither of the first two: no gcp bucket is served.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

inline constexpr std::string_view kGcsEndpoint = "https://storage.googleapis.com";
inline constexpr std::string_view kGcsScope = "https://www.googleapis.com/auth/devstorage.full_control";
inline constexpr int64_t kGcsAssertionLifetime = 3600;  // seconds: the most Google accepts

struct GcsServiceAccount {
  std::string client_email;
  std::string private_key;  // PEM
  std::string private_key_id;
  std::string token_uri;
  std::string project_id;
};

// A service-account key file's contents; `path` names it in messages.
Result<GcsServiceAccount> ParseServiceAccount(std::string_view json, const std::string& path);

// The signed assertion of a token request at `now` (Unix seconds): header {alg RS256, typ JWT,
// kid}, claims {iss, scope, aud = token_uri, iat, exp = iat + kGcsAssertionLifetime}.
Result<std::string> MakeTokenAssertion(const GcsServiceAccount& sa, int64_t now);
// The form body POSTed to token_uri for `assertion`.
std::string TokenRequestBody(std::string_view assertion);

// A GCS object name as one path segment or query value: every byte but RFC 3986 unreserved
// ones as %XX ('/' too).
std::string EncodeGcsObjectName(std::string_view name);

struct GcsSettings {
  std::string endpoint;  // "https://storage.googleapis.com", or the emulator's base URL
  bool emulator = false;
  std::string project;
  std::optional<GcsServiceAccount> account;  // none: unauthenticated (the emulator)

  std::string Describe() const;  // for messages: the endpoint and whose key, no secret
};

using GetEnv = std::function<const char*(const char*)>;

// The settings from the environment (see the top of this file); an error names the variables.
Result<GcsSettings> ResolveGcsSettings(const GetEnv& getenv);

}  // namespace ais
