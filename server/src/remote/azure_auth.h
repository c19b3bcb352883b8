// Where Azure Blob requests go and how they are signed, decided from the environment as AIS's
// azure backend decides it:
//   AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY  the account and its (base64) key: every request is
//                                             signed with Shared Key (HMAC-SHA256 of a
//                                             canonical string-to-sign, as Azure specifies it);
//   AIS_AZURE_URL                             unset: <proto><account>.blob.core.windows.net; an
//                                             http(s) URL: that endpoint verbatim (Azurite:
//                                             http://127.0.0.1:10000/devstoreaccount1); else a
//                                             host suffix: <proto><account>.<suffix>;
//   AIS_AZURE_PROTO                           <proto> of the composed forms (default https://).
// Neither account nor key: no azure bucket is served.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace ais {

inline constexpr std::string_view kAzureApiVersion = "2021-08-06";  // x-ms-version of every request

struct AzureSettings {
  std::string endpoint;  // no trailing '/': a container is endpoint + "/" + name
  std::string account;
  std::string key;  // the decoded account key (raw bytes)

  std::string Describe() const;  // for messages: endpoint and account, no secret
};

using AzureGetEnv = std::function<const char*(const char*)>;

// The settings from the environment (see the top of this file); an error names the variables.
Result<AzureSettings> ResolveAzureSettings(const AzureGetEnv& getenv);

// Shared Key's string-to-sign of a request: the verb, the standard headers Azure names (in its
// order, Content-Length empty when 0), the x-ms-* headers (lower-cased, sorted, trimmed) and the
// canonical resource: "/" + account + the URL's escaped path, then each query parameter
// (name lower-cased, sorted; values decoded and, when repeated, sorted and comma-joined).
// `headers` are "Name: value" lines as sent.
std::string AzureStringToSign(std::string_view method, std::string_view url, const std::vector<std::string>& headers,
                              std::string_view account);

// base64(HMAC-SHA256(key, string_to_sign)): the signature of "Authorization: SharedKey a:<sig>".
std::string AzureSignature(std::string_view key, std::string_view string_to_sign);

}  // namespace ais
