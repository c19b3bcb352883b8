#include "remote/gcs_client.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/base64.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr int64_t kTokenSlack = 60;  // seconds before its expiry a token is renewed
constexpr uint32_t kMaxBucketPages = 1000;

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// RFC 3339 ("2026-01-02T03:04:05.678Z") to Unix nanoseconds; 0 when unparsable.
int64_t ParseRfc3339(const std::string& s) {
  std::tm tm{};
  int frac_pos = 0;
  if (sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec, &frac_pos) != 6) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t ns = static_cast<int64_t>(timegm(&tm)) * 1'000'000'000;
  if (static_cast<size_t>(frac_pos) < s.size() && s[frac_pos] == '.') {
    int64_t scale = 100'000'000;
    for (size_t i = frac_pos + 1; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && scale > 0; ++i) {
      ns += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return ns;
}

std::string Rfc1123(int64_t unix_ns) {
  time_t t = static_cast<time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

Result<nlohmann::json> ParseReply(const HttpCall& call) {
  auto j = nlohmann::json::parse(call.resp_body, nullptr, false);
  if (!j.is_object()) return Status::IOError("gcp-error[unparsable reply: " + call.what + "]");
  return j;
}

}  // namespace

GcsClient::GcsClient(GcsSettings settings)
    : settings_(std::move(settings)), handles_(std::make_unique<CurlHandles>()) {}

GcsClient::~GcsClient() = default;

RemoteObjectAttrs GcsClient::AttrsFromResource(const nlohmann::json& o) {
  RemoteObjectAttrs a;
  a.provider = "gcp";
  a.size = ParseUint(JsonFieldText(o, "size")).value_or(0);
  a.etag = JsonFieldText(o, "etag");
  if (auto md5 = DecodeBase64(JsonFieldText(o, "md5Hash")); md5 && md5->size() == 16) a.md5 = Hex(*md5);
  a.crc32c = JsonFieldText(o, "crc32c");
  a.version = JsonFieldText(o, "generation");
  a.mtime_ns = ParseRfc3339(JsonFieldText(o, "updated"));
  if (a.mtime_ns > 0) a.last_modified = Rfc1123(a.mtime_ns);
  a.content_type = JsonFieldText(o, "contentType");
  if (auto it = o.find("metadata"); it != o.end() && it->is_object()) {
    for (auto& [k, v] : it->items()) {
      // AIS's checksum keys are literally "x-goog-meta-ais-cksum-{type,val}" in the map.
      std::string name = AsciiLower(k);
      if (name.starts_with("x-goog-meta-")) name.erase(0, 12);
      if (v.is_string()) a.user_meta.emplace_back(std::move(name), v.get<std::string>());
    }
  }
  return a;
}

Result<std::string> GcsClient::AccessToken() {
  const auto& sa = *settings_.account;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::lock_guard lock(token_mu_);  // one exchange at a time; the others wait for its token
  if (!token_.empty() && now < token_expiry_ - kTokenSlack) return token_;
  auto assertion = MakeTokenAssertion(sa, now);
  if (!assertion.ok()) return assertion.status();
  HttpCall call;
  call.method = "POST";
  call.url = sa.token_uri;
  call.what = "token request to " + sa.token_uri;
  call.headers.emplace_back("Content-Type: application/x-www-form-urlencoded");
  call.post_body = TokenRequestBody(*assertion);
  auto error_of = [&](const HttpCall& r) -> Status {
    std::string why = "HTTP " + std::to_string(r.status);
    auto j = nlohmann::json::parse(r.resp_body, nullptr, false);
    if (j.is_object()) {
      if (std::string e = JsonFieldText(j, "error"); !e.empty()) why += ": " + e;
      if (std::string d = JsonFieldText(j, "error_description"); !d.empty()) why += ": " + d;
    }
    std::string text = "gcp-error[" + why + ": " + r.what + "] (" + settings_.Describe() + ")";
    if (r.status == 429) return Status::TooManyRequests(text);
    if (r.status >= 500) return Status::Unavailable(text);
    return Status::Unauthorized(text);
  };
  AIS_RETURN_IF_ERROR(PerformHttp(*handles_, call, "gcp-error", settings_.Describe(), error_of));
  auto j = ParseReply(call);
  if (!j.ok()) return j.status();
  std::string token = JsonFieldText(*j, "access_token");
  auto ttl = j->find("expires_in");
  if (token.empty() || ttl == j->end() || !ttl->is_number()) {
    return Status::Unauthorized("gcp-error[no access_token/expires_in in the reply: " + call.what + "]");
  }
  token_ = std::move(token);
  token_expiry_ = now + ttl->get<int64_t>();
  return token_;
}

Status GcsClient::Perform(HttpCall& call, const std::string& bucket, const std::string& object) {
  if (settings_.account) {
    auto token = AccessToken();
    if (!token.ok()) return token.status();
    call.headers.push_back("Authorization: Bearer " + *token);
  }
  auto error_of = [&](const HttpCall& r) -> Status {
    // {"error": {"code": 404, "message": "No such object: b/o", "errors": [...]}}; an emulator may send none.
    std::string message;
    auto j = nlohmann::json::parse(r.resp_body, nullptr, false);
    if (j.is_object() && j.contains("error") && j["error"].is_object()) message = JsonFieldText(j["error"], "message");
    const bool bucket_missing = r.status == 404 && (object.empty() || message.find("bucket") != std::string::npos);
    if (bucket_missing) return Status::BucketNotFound("gcp bucket \"gs://" + bucket + "\" does not exist");
    if (r.status == 404 || (r.status == 403 && message.find("may not exist") != std::string::npos)) {
      return Status::NotFound("gcp-error[storage: object doesn't exist: " + r.what + "]");
    }
    std::string text = "gcp-error[" + (message.empty() ? "HTTP " + std::to_string(r.status) : message) + ": " +
                       r.what + "] (" + settings_.Describe() + ")";
    return BackendStatus(r.status, std::move(text));
  };
  return PerformHttp(*handles_, call, "gcp-error", settings_.Describe(), error_of);
}

std::string GcsClient::ObjectUrl(const std::string& bucket, const std::string& key) const {
  return settings_.endpoint + "/storage/v1/b/" + PercentEncode(bucket) + "/o/" + EncodeGcsObjectName(key);
}

Result<RemoteBucketInfo> GcsClient::HeadBucket(const std::string& bucket) {
  HttpCall call;
  call.url = settings_.endpoint + "/storage/v1/b/" + PercentEncode(bucket);
  call.what = "gs://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, ""));
  return RemoteBucketInfo{.region = "", .versioning = true};  // generations: AIS reports gcp buckets versioned
}

Result<std::vector<std::string>> GcsClient::ListBuckets() {
  if (settings_.project.empty()) {
    return Status::InvalidArgument(
        "failed to list buckets gs://, err: empty project ID: cannot list GCP buckets without project ID "
        "(GOOGLE_CLOUD_PROJECT or the project_id of GOOGLE_APPLICATION_CREDENTIALS)");
  }
  std::vector<std::string> out;
  std::string token;
  for (uint32_t page = 0; page < kMaxBucketPages; ++page) {
    HttpCall call;
    call.url = settings_.endpoint + "/storage/v1/b?project=" + PercentEncode(settings_.project);
    if (!token.empty()) call.url += "&pageToken=" + PercentEncode(token);
    call.what = "gs://";
    AIS_RETURN_IF_ERROR(Perform(call, "", ""));
    auto j = ParseReply(call);
    if (!j.ok()) return j.status();
    if (auto it = j->find("items"); it != j->end() && it->is_array()) {
      for (auto& b : *it) {
        if (std::string name = JsonFieldText(b, "name"); !name.empty()) out.push_back(std::move(name));
      }
    }
    token = JsonFieldText(*j, "nextPageToken");
    if (token.empty()) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<RemoteObjectAttrs> GcsClient::HeadObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.url = ObjectUrl(bucket, key);
  call.what = "gs://" + bucket + "/" + key;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  auto j = ParseReply(call);
  if (!j.ok()) return j.status();
  return AttrsFromResource(*j);
}

Status GcsClient::GetObject(const std::string& bucket, const std::string& key,
                            std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                            const OnData& on_data, const RemoteObjectAttrs* known) {
  const std::string what = "gs://" + bucket + "/" + key;
  if (range && range->second == 0) return Status::InvalidArgument("empty range of " + what);
  const bool pinned = known && !known->version.empty();
  auto attrs = pinned ? Result<RemoteObjectAttrs>(*known) : HeadObject(bucket, key);
  if (!attrs.ok()) return attrs.status();
  if (range && range->first + range->second > attrs->size) {
    return Status::RangeNotSatisfiable("gcp-error[range " + std::to_string(range->first) + "+" +
                                       std::to_string(range->second) + " beyond the " + std::to_string(attrs->size) +
                                       " bytes of " + what + "]");
  }
  HttpCall call;
  // Pinned to the generation its attributes describe (a rewrite meanwhile is 404, not a mix).
  call.url = ObjectUrl(bucket, key) + "?alt=media";
  if (!attrs->version.empty()) call.url += "&generation=" + PercentEncode(attrs->version);
  call.what = what;
  if (range) {
    call.headers.push_back("Range: bytes=" + std::to_string(range->first) + "-" +
                           std::to_string(range->first + range->second - 1));
  }
  call.on_headers = [&](const HttpCall::Headers&) { return on_attrs(*attrs); };
  call.on_data = &on_data;
  Status st = Perform(call, bucket, key);
  if (pinned && st.code() == Status::Code::kNotFound) {
    return Status::Conflict(what + " changed remotely (generation " + known->version + " is gone)");
  }
  return st;
}

Result<RemoteObjectAttrs> GcsClient::PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                               const ReadBody& body, const std::function<Status()>& rewind,
                                               const KeyValues& user_meta) {
  if (!user_meta.empty()) {
    return Status::NotSupported("gcp: user metadata on upload is not supported (gs://" + bucket + "/" + key + ")");
  }
  HttpCall call;
  call.method = "POST";
  call.url = settings_.endpoint + "/upload/storage/v1/b/" + PercentEncode(bucket) +
             "/o?uploadType=media&name=" + EncodeGcsObjectName(key);
  call.what = "gs://" + bucket + "/" + key;
  call.headers.emplace_back("Content-Type: application/octet-stream");
  call.upload_size = size;
  call.body = &body;
  call.rewind = rewind ? &rewind : nullptr;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  auto j = ParseReply(call);
  if (!j.ok()) return j.status();
  RemoteObjectAttrs a = AttrsFromResource(*j);
  if (a.size != size) {
    return Status::IOError("gcp-error[uploaded " + std::to_string(size) + " bytes, GCS has " + std::to_string(a.size) +
                           ": " + call.what + "]");
  }
  return a;
}

Status GcsClient::DeleteObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.method = "DELETE";
  call.url = ObjectUrl(bucket, key);
  call.what = "gs://" + bucket + "/" + key;
  return Perform(call, bucket, key);
}

Result<RemoteListPage> GcsClient::ListObjects(const std::string& bucket, const std::string& prefix,
                                              const std::string& token, uint32_t max_keys, bool delimited,
                                              const std::string& start_after) {
  HttpCall call;
  call.url = settings_.endpoint + "/storage/v1/b/" + PercentEncode(bucket) + "/o?maxResults=" + std::to_string(max_keys);
  if (!prefix.empty()) call.url += "&prefix=" + PercentEncode(prefix);
  if (delimited) call.url += "&delimiter=%2F";
  if (!token.empty()) call.url += "&pageToken=" + PercentEncode(token);
  if (!start_after.empty()) call.url += "&startOffset=" + PercentEncode(start_after);
  call.what = "gs://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, ""));
  auto j = ParseReply(call);
  if (!j.ok()) return j.status();
  RemoteListPage page;
  auto after = [&](const std::string& name) { return start_after.empty() || name > start_after; };
  if (auto it = j->find("items"); it != j->end() && it->is_array()) {
    for (auto& o : *it) {
      RemoteObjectAttrs a = AttrsFromResource(o);
      RemoteListEntry e{.name = JsonFieldText(o, "name"),
                        .size = a.size,
                        .etag = a.etag,
                        .md5 = a.md5,
                        .version = a.version,
                        .last_modified = JsonFieldText(o, "updated"),
                        .is_dir = false};
      if (after(e.name)) page.entries.push_back(std::move(e));
    }
  }
  if (auto it = j->find("prefixes"); it != j->end() && it->is_array()) {
    for (auto& p : *it) {
      // A common prefix holding start_after holds keys after it too.
      if (p.is_string() && (after(p.get<std::string>()) || start_after.starts_with(p.get<std::string>()))) {
        RemoteListEntry e;
        e.name = p.get<std::string>();
        e.is_dir = true;
        page.entries.push_back(std::move(e));
      }
    }
  }
  page.next_token = JsonFieldText(*j, "nextPageToken");
  return page;
}

}  // namespace ais
