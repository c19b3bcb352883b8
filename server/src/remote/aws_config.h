// Where an S3 call goes and as whom, resolved the AIS way (spec remote-backend §1): per-bucket
// `extra.aws` props first, then the environment (`S3_ENDPOINT`, `AWS_PROFILE`, `AWS_REGION`,
// `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`), then the shared config and
// credentials files (`AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE`, ~/.aws/, or every file of
// `AIS_S3_CONFIG_DIR` whose name contains "conf" or "cred").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais {

// The per-bucket overrides (bucket props `extra.aws`); empty means "not set".
struct AwsBucketConfig {
  std::string profile;
  std::string endpoint;
  std::string region;
  bool path_style = false;  // feature S3-Use-Path-Style
};

struct AwsSettings {
  std::string endpoint;  // scheme://host[:port], no trailing '/'; empty: AWS itself
  std::string region;    // never empty once resolved ("us-east-1" when nothing says otherwise)
  std::string profile;
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  bool path_style = false;  // path-style addressing (always for a custom endpoint)

  bool anonymous() const { return access_key.empty(); }
  // (profile, region, endpoint): the key S3 clients are cached under, and what error messages
  // name (never the credentials).
  std::string Describe() const;
};

// Resolves the settings for a bucket; kInvalidArgument for an unreadable named profile or a
// region that is not a region name (it becomes part of a host name).
Result<AwsSettings> ResolveAwsSettings(const AwsBucketConfig& bucket);

// An endpoint as the settings hold it: "https://" when no scheme is given, no trailing '/'.
std::string NormalizeEndpoint(std::string_view endpoint);

// A bucket's own `extra.aws.endpoint` may only name an http(s) endpoint the operator listed
// (aistore-server --allow-s3-endpoint, compared normalized): whoever may set bucket props must
// not be able to point the server's requests, and every reader of the bucket, at an address of
// their choice (the instance metadata service, an internal host). The endpoint the operator
// configured (S3_ENDPOINT, a profile's endpoint_url) needs no listing. kForbidden otherwise.
Status CheckBucketEndpoint(std::string_view endpoint, const std::vector<std::string>& allowed);

}  // namespace ais
