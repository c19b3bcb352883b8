#include "remote/azure_auth.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <map>
#include <memory>

#include "util/base64.h"
#include "util/strings.h"

namespace ais {
namespace {

std::string TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

struct CurlUrlFree {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// One part of `url` as curl parses it (escaped as written); "" when absent.
std::string UrlPart(CURLU* u, CURLUPart what) {
  char* part = nullptr;
  if (curl_url_get(u, what, &part, 0) != CURLUE_OK || part == nullptr) return {};
  std::string out(part);
  curl_free(part);
  return out;
}

}  // namespace

std::string AzureSettings::Describe() const { return "endpoint " + endpoint + ", account " + account; }

Result<AzureSettings> ResolveAzureSettings(const AzureGetEnv& getenv) {
  auto env = [&](const char* name) {
    const char* v = getenv(name);
    return v ? std::string(v) : std::string();
  };
  AzureSettings s;
  s.account = env("AZURE_STORAGE_ACCOUNT");
  const std::string key = env("AZURE_STORAGE_KEY");
  if (s.account.empty() || key.empty()) {
    return Status::NotFound(
        "Azure backend is missing in the cluster configuration (az:// buckets need AZURE_STORAGE_ACCOUNT and "
        "AZURE_STORAGE_KEY, and AIS_AZURE_URL for an endpoint other than Azure's, in the server's environment)");
  }
  auto decoded = DecodeBase64(key);
  if (!decoded || decoded->empty()) {
    return Status::InvalidArgument("azure: AZURE_STORAGE_KEY is not a base64-encoded account key");
  }
  s.key = std::move(*decoded);
  std::string proto = env("AIS_AZURE_PROTO");
  if (proto.empty()) proto = "https://";
  if (proto.find("://") == std::string::npos) {
    return Status::InvalidArgument("azure: AIS_AZURE_PROTO \"" + proto + "\" is not a scheme (e.g. https://)");
  }
  std::string url = env("AIS_AZURE_URL");
  while (url.ends_with('/')) url.pop_back();
  if (url.empty()) {
    s.endpoint = proto + s.account + ".blob.core.windows.net";
  } else if (url.starts_with("http")) {
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      return Status::InvalidArgument("azure: AIS_AZURE_URL \"" + url + "\" is not an http(s) URL");
    }
    s.endpoint = url;
  } else {
    s.endpoint = proto + s.account + (url.starts_with('.') ? "" : ".") + url;
  }
  return s;
}

std::string AzureStringToSign(std::string_view method, std::string_view url, const std::vector<std::string>& headers,
                              std::string_view account) {
  std::map<std::string, std::string> standard;  // lower-cased name -> value
  std::map<std::string, std::string> ms;        // x-ms-* (sorted by name)
  for (const std::string& h : headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = AsciiLower(TrimSpaces(std::string_view(h).substr(0, colon)));
    std::string value = TrimSpaces(std::string_view(h).substr(colon + 1));
    if (name.starts_with("x-ms-")) {
      ms[name] = std::move(value);
    } else {
      standard[name] = std::move(value);
    }
  }
  auto get = [&](const char* name) -> std::string {
    auto it = standard.find(name);
    return it == standard.end() ? std::string() : it->second;
  };
  std::string out(method);
  out += '\n';
  for (const char* name : {"content-encoding", "content-language", "content-length", "content-md5", "content-type",
                           "date", "if-modified-since", "if-match", "if-none-match", "if-unmodified-since", "range"}) {
    std::string v = get(name);
    if (std::string_view(name) == "content-length" && v == "0") v.clear();
    out += v;
    out += '\n';
  }
  for (auto& [k, v] : ms) out += k + ":" + v + "\n";

  std::unique_ptr<CURLU, CurlUrlFree> u(curl_url());
  const std::string full(url);
  std::string path = "/", query;
  if (u && curl_url_set(u.get(), CURLUPART_URL, full.c_str(), 0) == CURLUE_OK) {
    path = UrlPart(u.get(), CURLUPART_PATH);
    query = UrlPart(u.get(), CURLUPART_QUERY);
    if (path.empty()) path = "/";
  }
  out += "/";
  out += account;
  out += path;
  std::map<std::string, std::vector<std::string>> params;
  for (std::string_view kv : Split(query, '&')) {
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    std::string_view name = kv.substr(0, eq), value = eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    params[AsciiLower(PercentDecode(name, false).value_or(std::string(name)))].push_back(
        PercentDecode(value, false).value_or(std::string(value)));
  }
  for (auto& [name, values] : params) {
    std::sort(values.begin(), values.end());
    out += "\n" + name + ":";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  }
  return out;
}

std::string AzureSignature(std::string_view key, std::string_view string_to_sign) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(string_to_sign.data());
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data, string_to_sign.size(), mac, &len);
  return EncodeBase64(std::string_view(reinterpret_cast<const char*>(mac), len));
}

}  // namespace ais
