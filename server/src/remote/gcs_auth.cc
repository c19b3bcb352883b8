#include "remote/gcs_auth.h"

#include <jwt.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "remote/http_call.h"
#include "util/file.h"

namespace ais {
namespace {

struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};

std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<GcsServiceAccount> ParseServiceAccount(std::string_view json, const std::string& path) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("gcp: failed to load application creds from \"" + path + "\": " + why);
  };
  if (!j.is_object()) return bad("not a JSON object");
  if (StringField(j, "type") != "service_account") {
    return bad("type \"" + StringField(j, "type") + "\" is not supported (expecting \"service_account\")");
  }
  if (j.contains("project_id") && !j["project_id"].is_string()) return bad("project_id is not a string");
  GcsServiceAccount sa{.client_email = StringField(j, "client_email"),
                       .private_key = StringField(j, "private_key"),
                       .private_key_id = StringField(j, "private_key_id"),
                       .token_uri = StringField(j, "token_uri"),
                       .project_id = StringField(j, "project_id")};
  if (sa.client_email.empty()) return bad("no client_email");
  if (sa.private_key.empty()) return bad("no private_key");
  if (sa.token_uri.empty()) sa.token_uri = "https://oauth2.googleapis.com/token";
  if (!sa.token_uri.starts_with("https://") && !sa.token_uri.starts_with("http://")) {
    return bad("token_uri \"" + sa.token_uri + "\" is not an http(s) URL");
  }
  return sa;
}

Result<std::string> MakeTokenAssertion(const GcsServiceAccount& sa, int64_t now) {
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) return Status::IOError("gcp: jwt_new failed");
  std::unique_ptr<jwt_t, JwtFree> jwt(raw);
  const auto* key = reinterpret_cast<const unsigned char*>(sa.private_key.data());
  if (jwt_set_alg(jwt.get(), JWT_ALG_RS256, key, static_cast<int>(sa.private_key.size())) != 0) {
    return Status::InvalidArgument("gcp: the service account's private_key is not a usable RSA key");
  }
  int rc = jwt_add_grant(jwt.get(), "iss", sa.client_email.c_str());
  rc |= jwt_add_grant(jwt.get(), "scope", std::string(kGcsScope).c_str());
  rc |= jwt_add_grant(jwt.get(), "aud", sa.token_uri.c_str());
  rc |= jwt_add_grant_int(jwt.get(), "iat", static_cast<long>(now));
  rc |= jwt_add_grant_int(jwt.get(), "exp", static_cast<long>(now + kGcsAssertionLifetime));
  if (!sa.private_key_id.empty()) rc |= jwt_add_header(jwt.get(), "kid", sa.private_key_id.c_str());
  if (rc != 0) return Status::IOError("gcp: building the token assertion failed");
  char* text = jwt_encode_str(jwt.get());  // signs; nullptr when the key does not
  if (text == nullptr) return Status::InvalidArgument("gcp: signing the token assertion failed (private_key)");
  std::string out(text);
  free(text);  // NOLINT: libjwt allocates it with malloc
  return out;
}

std::string TokenRequestBody(std::string_view assertion) {
  return "grant_type=" + PercentEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
         "&assertion=" + PercentEncode(assertion);
}

std::string EncodeGcsObjectName(std::string_view name) { return PercentEncode(name); }

std::string GcsSettings::Describe() const {
  if (emulator) return "emulator " + endpoint;
  std::string out = "endpoint " + endpoint;
  if (account) out += ", service account " + account->client_email;
  return out;
}

Result<GcsSettings> ResolveGcsSettings(const GetEnv& getenv) {
  auto env = [&](const char* name) {
    const char* v = getenv(name);
    return v ? std::string(v) : std::string();
  };
  GcsSettings s;
  const std::string project = env("GOOGLE_CLOUD_PROJECT");
  s.project = project;
  if (std::string host = env("STORAGE_EMULATOR_HOST"); !host.empty()) {
    while (host.ends_with('/')) host.pop_back();
    s.endpoint = host.find("://") == std::string::npos ? "http://" + host : host;
    if (!s.endpoint.starts_with("http://") && !s.endpoint.starts_with("https://")) {
      return Status::InvalidArgument("gcp: STORAGE_EMULATOR_HOST \"" + host + "\" is not an http(s) endpoint");
    }
    s.emulator = true;
    return s;
  }
  const std::string creds = env("GOOGLE_APPLICATION_CREDENTIALS");
  if (creds.empty()) {
    return Status::NotFound(
        "GCP backend is missing in the cluster configuration (gs:// buckets need GOOGLE_APPLICATION_CREDENTIALS, "
        "a service-account key file, or STORAGE_EMULATOR_HOST, an emulator, in the server's environment)");
  }
  auto text = ReadFile(creds);
  if (!text.ok()) {
    return Status::InvalidArgument("gcp: failed to load application creds from \"" + creds +
                                   "\" (GOOGLE_APPLICATION_CREDENTIALS): " + text.status().message());
  }
  auto sa = ParseServiceAccount(*text, creds);
  if (!sa.ok()) return sa.status();
  if (!project.empty() && !sa->project_id.empty() && project != sa->project_id) {
    return Status::InvalidArgument(
        "both \"GOOGLE_CLOUD_PROJECT\" and \"GOOGLE_APPLICATION_CREDENTIALS\" env vars cannot be defined (and not "
        "equal project_id)");
  }
  if (s.project.empty()) s.project = sa->project_id;
  s.endpoint = std::string(kGcsEndpoint);
  if (std::string url = env("AIS_GCP_URL"); !url.empty()) {
    while (url.ends_with('/')) url.pop_back();
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      return Status::InvalidArgument("gcp: AIS_GCP_URL \"" + url + "\" is not an http(s) URL");
    }
    s.endpoint = url;
  }
  s.account = std::move(*sa);
  return s;
}

}  // namespace ais
