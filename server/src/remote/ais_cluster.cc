#include "remote/ais_cluster.h"

#include <algorithm>
#include <cstdio>

#include "util/file.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr long kMaxRedirects = 3;  // a proxy's redirect to a target, and no more

// A PUT body redirected by a remote proxy to its target is sent again from its start.
int SeekToStart(void* rewind, curl_off_t offset, int origin) {
  if (offset != 0 || origin != SEEK_SET || rewind == nullptr) return CURL_SEEKFUNC_CANTSEEK;
  return (*static_cast<const std::function<Status()>*>(rewind))().ok() ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

// Follows the remote proxy's redirects (to its targets, over HTTP(S) only: http_call.cc), and
// sends `json_body` (when not empty) with a method that takes no body in PerformHttp (GET, DELETE).
void Configure(HttpCall& call, std::string json_body = "") {
  if (!json_body.empty()) {
    call.post_body = std::move(json_body);
    call.headers.emplace_back("Content-Type: application/json");
  }
  call.configure = [&call](CURL* c) {
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, kMaxRedirects);
    curl_easy_setopt(c, CURLOPT_POSTREDIR, static_cast<long>(CURL_REDIR_POST_ALL));
    if (call.rewind) {
      curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, &SeekToStart);
      curl_easy_setopt(c, CURLOPT_SEEKDATA, const_cast<std::function<Status()>*>(call.rewind));
    }
    if (!call.post_body.empty() && call.method != "POST") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.post_body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, call.post_body.data());
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    }
  };
}

// An object name in a URL path: each '/'-separated part percent-encoded.
std::string PathEscape(std::string_view name) {
  std::string out;
  for (size_t begin = 0;;) {
    const size_t slash = name.find('/', begin);
    out += PercentEncode(name.substr(begin, slash == std::string_view::npos ? std::string_view::npos : slash - begin));
    if (slash == std::string_view::npos) return out;
    out += '/';
    begin = slash + 1;
  }
}

// "ns/name" -> (ns, name); "name" -> ("", name).
std::pair<std::string, std::string> SplitBucketArg(const std::string& arg) {
  auto slash = arg.find('/');
  if (slash == std::string::npos) return {"", arg};
  return {arg.substr(0, slash), arg.substr(slash + 1)};
}

// cmn.IsAlphaPlus-like alias rule (AIS: 2..64 letters, digits, '-', '_', single '.'; not "what").
Status ValidateAlias(const std::string& alias) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("invalid remote cluster alias \"" + alias.substr(0, 80) + "\": " + std::string(why));
  };
  if (alias.size() < 2 || alias.size() > 64) return bad("must be 2 to 64 characters long");
  if (alias == "what") return bad("reserved word");
  if (alias.find("..") != std::string::npos) return bad("may not contain '..'");
  for (char c : alias) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return bad("may only contain letters, numbers, dashes (-), underscores (_), and dots (.)");
  }
  return Status::OK();
}

}  // namespace

std::string AisBucketArg(std::string_view key) {
  const BucketNs ns = KeyNs(key);
  std::string name(KeyName(key));
  return ns.name.empty() ? name : ns.name + "/" + name;
}

AisClient::AisClient(std::string alias, std::string url, std::string uuid)
    : alias_(std::move(alias)), url_(std::move(url)), uuid_(std::move(uuid)), handles_(std::make_unique<CurlHandles>()) {}

AisClient::~AisClient() = default;

std::string AisClient::Url(const std::string& path, const std::string& bucket_arg, const std::string& query) const {
  std::string out = url_ + path + "?provider=ais";
  // The remote's own namespace: "@uuid#ns" here is "#ns" there.
  if (auto [ns, name] = SplitBucketArg(bucket_arg); !ns.empty()) out += "&namespace=" + PercentEncode("@#" + ns);
  if (!query.empty()) out += "&" + query;
  return out;
}

Status AisClient::Perform(HttpCall& call, const std::string& bucket, bool object) {
  const std::string prefix = "remote-cluster[" + uuid_ + "/@" + alias_ + "]: ";
  auto error_of = [&](const HttpCall& r) -> Status {
    // AIS's error document ({"message": ..., "status": N}), in Hdr-Error for a HEAD.
    std::string message;
    const std::string* hdr = r.Header("hdr-error");
    auto j = nlohmann::json::parse(hdr ? *hdr : r.resp_body, nullptr, false);
    if (j.is_object()) message = JsonFieldText(j, "message");
    if (message.empty()) message = "HTTP " + std::to_string(r.status) + " (" + r.what + ")";
    if (r.status == 404) {
      const bool bucket_missing = !object || message.find("bucket") != std::string::npos;
      if (bucket_missing) return Status::BucketNotFound(prefix + message);
      return Status::NotFound(prefix + message);
    }
    return BackendStatus(static_cast<int>(r.status), prefix + message);
  };
  (void)bucket;
  return PerformHttp(*handles_, call, "remote-cluster[" + uuid_ + "/@" + alias_ + "]", url_, error_of);
}

RemoteObjectAttrs AisClient::AttrsFromHeaders(const HttpCall& call) {
  RemoteObjectAttrs a;
  a.provider = "ais";
  if (const std::string* v = call.Header("content-length")) a.size = ParseUint(*v).value_or(0);
  if (const std::string* v = call.Header("content-range")) {  // "bytes S-E/TOTAL": the object's size
    if (auto slash = v->rfind('/'); slash != std::string::npos) a.size = ParseUint(v->substr(slash + 1)).value_or(a.size);
  }
  if (const std::string* v = call.Header("ais-version")) a.version = *v;
  if (const std::string* v = call.Header("last-modified")) a.last_modified = *v;
  if (const std::string* v = call.Header("etag")) {
    a.etag = *v;
    a.etag.erase(std::remove(a.etag.begin(), a.etag.end(), '"'), a.etag.end());
  }
  const std::string* type = call.Header("ais-checksum-type");
  const std::string* value = call.Header("ais-checksum-value");
  if (type && value && !type->empty() && *type != "none" && !value->empty()) {
    if (*type == "md5") a.md5 = *value;
    // The remote's checksum: what a cold GET validates against (validate_cold_get).
    a.user_meta.emplace_back("ais-cksum-type", *type);
    a.user_meta.emplace_back("ais-cksum-val", *value);
  }
  return a;
}

Result<RemoteBucketInfo> AisClient::HeadBucket(const std::string& bucket) {
  HttpCall call;
  call.method = "HEAD";
  call.url = Url("/v1/buckets/" + PercentEncode(SplitBucketArg(bucket).second), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket;
  Configure(call);
  AIS_RETURN_IF_ERROR(Perform(call, bucket, false));
  RemoteBucketInfo info;
  info.versioning = true;  // AIS versions every object (the remote's counter)
  if (const std::string* props = call.Header("ais-bucket-props")) {
    auto j = nlohmann::json::parse(*props, nullptr, false);
    if (j.is_object() && j.contains("versioning") && j["versioning"].is_object() &&
        j["versioning"].contains("enabled") && j["versioning"]["enabled"].is_boolean()) {
      info.versioning = j["versioning"]["enabled"].get<bool>();
    }
  }
  return info;
}

Result<std::vector<RemoteAisBucket>> AisClient::ListAisBuckets(const std::string& ns_name) {
  HttpCall call;
  call.url = Url("/v1/buckets", ns_name.empty() ? "" : ns_name + "/", "presence=0");
  call.what = "ais://@" + alias_;
  Configure(call, R"({"action":"list"})");
  AIS_RETURN_IF_ERROR(Perform(call, "", false));
  auto j = nlohmann::json::parse(call.resp_body, nullptr, false);
  if (!j.is_array() && !j.is_null()) return Status::IOError("remote-cluster[" + uuid_ + "]: unparsable list of buckets");
  std::vector<RemoteAisBucket> out;
  if (j.is_array()) {
    for (auto& b : j) {
      if (!b.is_object()) continue;
      const std::string provider = JsonFieldText(b, "provider");
      if (!provider.empty() && provider != "ais") continue;
      RemoteAisBucket rb{.name = JsonFieldText(b, "name"), .ns = {.uuid = uuid_, .name = ""}};
      if (auto ns = b.find("namespace"); ns != b.end() && ns->is_object()) {
        if (!JsonFieldText(*ns, "uuid").empty()) continue;  // the remote's own remote clusters: not ours to show
        rb.ns.name = JsonFieldText(*ns, "name");
      }
      if (!rb.name.empty()) out.push_back(std::move(rb));
    }
  }
  return out;
}

Result<std::vector<std::string>> AisClient::ListBuckets() {
  auto listed = ListAisBuckets("");
  if (!listed.ok()) return listed.status();
  std::vector<std::string> out;
  for (auto& b : *listed) {
    if (b.ns.name.empty()) out.push_back(b.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status AisClient::CreateBucket(const std::string& bucket) {
  HttpCall call;
  call.method = "POST";
  call.url = Url("/v1/buckets/" + PercentEncode(SplitBucketArg(bucket).second), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket;
  Configure(call, R"({"action":"create-bck"})");
  return Perform(call, bucket, false);
}

Status AisClient::DestroyBucket(const std::string& bucket) {
  HttpCall call;
  call.method = "DELETE";
  call.url = Url("/v1/buckets/" + PercentEncode(SplitBucketArg(bucket).second), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket;
  Configure(call, R"({"action":"destroy-bck"})");
  return Perform(call, bucket, false);
}

Result<RemoteObjectAttrs> AisClient::HeadObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.method = "HEAD";
  call.url = Url("/v1/objects/" + PercentEncode(SplitBucketArg(bucket).second) + "/" + PathEscape(key), bucket,
                 "props=" + PercentEncode("size,checksum,atime,version,custom"));
  call.what = "ais://@" + alias_ + "/" + bucket + "/" + key;
  Configure(call);
  AIS_RETURN_IF_ERROR(Perform(call, bucket, true));
  if (const std::string* present = call.Header("ais-present"); present && *present == "false") {
    return Status::NotFound("remote-cluster[" + uuid_ + "/@" + alias_ + "]: " + call.what + " does not exist");
  }
  return AttrsFromHeaders(call);
}

Status AisClient::GetObject(const std::string& bucket, const std::string& key,
                            std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                            const OnData& on_data, const RemoteObjectAttrs* known) {
  HttpCall call;
  call.url = Url("/v1/objects/" + PercentEncode(SplitBucketArg(bucket).second) + "/" + PathEscape(key), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket + "/" + key;
  if (range) {
    if (range->second == 0) return Status::InvalidArgument("empty range of " + call.what);
    call.headers.push_back("Range: bytes=" + std::to_string(range->first) + "-" +
                           std::to_string(range->first + range->second - 1));
  }
  Configure(call);
  call.on_headers = [&](const HttpCall::Headers&) {
    RemoteObjectAttrs a = AttrsFromHeaders(call);
    if (known && (range || a.version.empty())) {  // a range names no size; the HEAD before it did
      const RemoteObjectAttrs was = a;
      a = *known;
      if (!was.version.empty() && !known->version.empty() && was.version != known->version) {
        return Status::Conflict(call.what + " changed remotely (version " + known->version + " -> " + was.version + ")");
      }
    }
    return on_attrs(a);
  };
  call.on_data = &on_data;
  return Perform(call, bucket, true);
}

Result<RemoteObjectAttrs> AisClient::PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                               const ReadBody& body, const std::function<Status()>& rewind,
                                               const KeyValues& user_meta) {
  HttpCall call;
  call.method = "PUT";
  call.url = Url("/v1/objects/" + PercentEncode(SplitBucketArg(bucket).second) + "/" + PathEscape(key), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket + "/" + key;
  call.headers.emplace_back("Content-Type: application/octet-stream");
  std::string type, value;
  for (auto& [k, v] : user_meta) {
    if (k == "ais-cksum-type") type = v;
    else if (k == "ais-cksum-val") value = v;
    else return Status::NotSupported("remote ais: user metadata on upload is not supported (" + call.what + ")");
  }
  if (!type.empty() && !value.empty()) {  // the remote validates what it receives
    call.headers.push_back("Ais-Checksum-Type: " + type);
    call.headers.push_back("Ais-Checksum-Value: " + value);
  }
  call.upload_size = size;
  call.body = &body;
  call.rewind = rewind ? &rewind : nullptr;
  Configure(call);
  AIS_RETURN_IF_ERROR(Perform(call, bucket, true));
  RemoteObjectAttrs a = AttrsFromHeaders(call);
  a.size = size;  // (a PUT's reply has no body: its Content-Length is 0)
  return a;
}

Status AisClient::DeleteObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.method = "DELETE";
  call.url = Url("/v1/objects/" + PercentEncode(SplitBucketArg(bucket).second) + "/" + PathEscape(key), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket + "/" + key;
  Configure(call);
  return Perform(call, bucket, true);
}

Result<RemoteListPage> AisClient::ListObjects(const std::string& bucket, const std::string& prefix,
                                              const std::string& token, uint32_t max_keys, bool delimited,
                                              const std::string& start_after) {
  // apc.LsoMsg; the remote's own listing flags only (LsNoRecursion for a "/"-delimited page).
  nlohmann::json value = {{"props", "name,size,checksum,version"}, {"pagesize", max_keys}};
  if (!prefix.empty()) value["prefix"] = prefix;
  if (!token.empty()) value["continuation_token"] = token;
  if (!start_after.empty()) value["start_after"] = start_after;
  if (delimited) value["flags"] = "2048";
  HttpCall call;
  call.url = Url("/v1/buckets/" + PercentEncode(SplitBucketArg(bucket).second), bucket);
  call.what = "ais://@" + alias_ + "/" + bucket;
  call.headers.emplace_back("Accept: application/json");
  Configure(call, nlohmann::json{{"action", "list"}, {"value", value}}.dump());
  AIS_RETURN_IF_ERROR(Perform(call, bucket, false));
  auto j = nlohmann::json::parse(call.resp_body, nullptr, false);
  if (!j.is_object()) return Status::IOError("remote-cluster[" + uuid_ + "]: unparsable listing of " + call.what);
  RemoteListPage page;
  if (auto it = j.find("entries"); it != j.end() && it->is_array()) {
    for (auto& e : *it) {
      if (!e.is_object()) continue;
      RemoteListEntry le;
      le.name = JsonFieldText(e, "name");
      le.size = ParseUint(JsonFieldText(e, "size")).value_or(0);  // AIS: a string ("size,string"); a number is taken too
      le.version = JsonFieldText(e, "version");
      uint64_t flags = 0;
      if (auto f = e.find("flags"); f != e.end() && f->is_number_unsigned()) flags = f->get<uint64_t>();
      le.is_dir = (flags & 256) != 0;  // EntryIsDir
      if (!le.name.empty()) page.entries.push_back(std::move(le));
    }
  }
  page.next_token = JsonFieldText(j, "continuation_token");
  return page;
}

// ---- AisClusters ------------------------------------------------------------------------------

AisClusters::AisClusters() : handles_(std::make_unique<CurlHandles>()) {}
AisClusters::~AisClusters() = default;

Status AisClusters::Load(const std::string& path) {
  std::vector<std::string> aliases;
  {
    std::lock_guard lock(mu_);
    path_ = path;
    auto text = ReadFile(path);
    if (!text.ok()) return text.status().IsNotFound() ? Status::OK() : text.status();
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object()) return Status::IOError("remote clusters: unparsable " + path);
    for (auto& [alias, urls] : j.items()) {
      if (!urls.is_array() || urls.empty() || !urls[0].is_string()) continue;
      by_alias_[alias].url = urls[0].get<std::string>();
      aliases.push_back(alias);
    }
  }
  for (auto& a : aliases) (void)Probe(a);  // unreachable: attached, defunct until it answers
  return Status::OK();
}

Status AisClusters::SaveLocked() const {
  if (path_.empty()) return Status::OK();
  nlohmann::json j = nlohmann::json::object();
  for (auto& [alias, e] : by_alias_) j[alias] = nlohmann::json::array({e.url});
  return AtomicWriteFile(path_, j.dump(), true);
}

nlohmann::json AisClusters::ConfigJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json j = nlohmann::json::object();
  for (auto& [alias, e] : by_alias_) j[alias] = nlohmann::json::array({e.url});
  return j;
}

int64_t AisClusters::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

size_t AisClusters::size() const {
  std::lock_guard lock(mu_);
  return by_alias_.size();
}

Status AisClusters::Probe(const std::string& alias) {
  std::string url;
  {
    std::lock_guard lock(mu_);
    auto it = by_alias_.find(alias);
    if (it == by_alias_.end()) return Status::NotFound("remote cluster \"" + alias + "\" does not exist");
    url = it->second.url;
  }
  HttpCall call;
  call.url = url + "/v1/daemon?what=smap";
  call.what = "remote cluster \"" + alias + "\" (" + url + ")";
  Configure(call);
  Status st = PerformHttp(*handles_, call, "remote-cluster[" + alias + "]", url,
                          [](const HttpCall& r) { return BackendStatus(static_cast<int>(r.status), "HTTP " + std::to_string(r.status) + " from " + r.what); });
  nlohmann::json smap;
  if (st.ok()) {
    smap = nlohmann::json::parse(call.resp_body, nullptr, false);
    if (!smap.is_object() || JsonFieldText(smap, "uuid").empty()) st = Status::IOError(call.what + ": no cluster map (uuid) in its reply");
  }
  std::lock_guard lock(mu_);
  auto it = by_alias_.find(alias);
  if (it == by_alias_.end() || it->second.url != url) return Status::OK();  // detached or re-attached meanwhile
  if (!st.ok()) {
    it->second.smap = nullptr;
    return st;
  }
  const std::string uuid = JsonFieldText(smap, "uuid");
  it->second.smap = std::move(smap);
  if (it->second.uuid != uuid || !it->second.client) {
    it->second.uuid = uuid;
    it->second.client = std::make_shared<AisClient>(alias, url, uuid);
  }
  return Status::OK();
}

Status AisClusters::Attach(const std::string& alias, const std::string& url) {
  AIS_RETURN_IF_ERROR(ValidateAlias(alias));
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    return Status::InvalidArgument("invalid URL scheme in \"" + url.substr(0, 200) + "\" (expecting http or https)");
  }
  if (url.size() <= 8 || url.find_first_of(" \t\r\n?#") != std::string::npos) {
    return Status::InvalidArgument("invalid remote cluster URL \"" + url.substr(0, 200) + "\"");
  }
  std::string clean = url;
  while (clean.ends_with('/')) clean.pop_back();
  {
    std::lock_guard lock(mu_);
    for (auto& [a, e] : by_alias_) {
      if (e.uuid == alias) return Status::InvalidArgument("alias \"" + alias + "\" is the UUID of attached cluster \"" + a + "\"");
    }
    auto it = by_alias_.find(alias);
    if (it != by_alias_.end() && it->second.url != clean) {
      return Status::Conflict("remote cluster \"" + alias + "\" (" + it->second.url + ") is already attached");
    }
    if (it == by_alias_.end()) {
      by_alias_[alias].url = clean;
      if (Status st = SaveLocked(); !st.ok()) {
        by_alias_.erase(alias);
        return st;
      }
      ++version_;
    }
  }
  if (Status st = Probe(alias); !st.ok()) {
    LogWarning("attached remote cluster \"" + alias + "\" (" + clean + ") is not reachable: " + st.message());
  } else {
    LogInfo("attached remote cluster \"" + alias + "\" (" + clean + ")");
  }
  return Status::OK();
}

Status AisClusters::Detach(const std::string& alias) {
  std::lock_guard lock(mu_);
  if (by_alias_.empty()) return Status::NotFound("failed to detach remote cluster \"" + alias + "\": remote cluster config is empty");
  auto it = by_alias_.find(alias);
  if (it == by_alias_.end()) {
    it = std::find_if(by_alias_.begin(), by_alias_.end(), [&](const auto& kv) { return kv.second.uuid == alias; });
  }
  if (it == by_alias_.end()) return Status::NotFound("failed to detach remote cluster \"" + alias + "\", err: not found");
  auto saved = *it;
  by_alias_.erase(it);
  if (Status st = SaveLocked(); !st.ok()) {
    by_alias_.insert(std::move(saved));
    return st;
  }
  ++version_;
  LogInfo("detached remote cluster \"" + alias + "\"");
  return Status::OK();
}

Result<std::string> AisClusters::ResolveUuid(const std::string& alias_or_uuid) {
  std::string alias;
  {
    std::lock_guard lock(mu_);
    if (by_alias_.empty()) {
      return Status::NotFound("remote cluster \"" + alias_or_uuid + "\" does not exist (no remote ais clusters attached)");
    }
    for (auto& [a, e] : by_alias_) {
      if (e.uuid == alias_or_uuid && !e.uuid.empty()) return e.uuid;
    }
    auto it = by_alias_.find(alias_or_uuid);
    if (it == by_alias_.end()) return Status::NotFound("remote cluster \"" + alias_or_uuid + "\" does not exist");
    if (!it->second.uuid.empty()) return it->second.uuid;
    alias = it->first;
  }
  if (Status st = Probe(alias); !st.ok()) {
    return Status::Unavailable("remote cluster \"" + alias + "\" is not reachable: " + st.message());
  }
  std::lock_guard lock(mu_);
  auto it = by_alias_.find(alias);
  if (it == by_alias_.end() || it->second.uuid.empty()) return Status::NotFound("remote cluster \"" + alias + "\" does not exist");
  return it->second.uuid;
}

std::optional<std::string> AisClusters::KnownUuid(const std::string& alias_or_uuid) const {
  std::lock_guard lock(mu_);
  if (auto it = by_alias_.find(alias_or_uuid); it != by_alias_.end() && !it->second.uuid.empty()) return it->second.uuid;
  for (auto& [a, e] : by_alias_) {
    if (e.uuid == alias_or_uuid && !e.uuid.empty()) return e.uuid;
  }
  return std::nullopt;
}

std::vector<RemoteAisInfo> AisClusters::Show() {
  std::vector<std::string> aliases;
  {
    std::lock_guard lock(mu_);
    for (auto& [a, e] : by_alias_) aliases.push_back(a);
  }
  for (auto& a : aliases) (void)Probe(a);
  std::vector<RemoteAisInfo> out;
  std::lock_guard lock(mu_);
  for (auto& [a, e] : by_alias_) out.push_back({.alias = a, .url = e.url, .uuid = e.uuid, .smap = e.smap});
  return out;
}

Result<std::shared_ptr<AisClient>> AisClusters::ClientOf(const std::string& uuid) {
  {
    std::lock_guard lock(mu_);
    for (auto& [a, e] : by_alias_) {
      if (e.uuid == uuid && e.client) return e.client;
    }
  }
  return Status::NotFound("remote cluster \"" + uuid + "\" does not exist (not attached)");
}

Result<std::vector<RemoteAisBucket>> AisClusters::ListBuckets(const BucketNs& ns) {
  std::vector<std::string> uuids;
  if (ns.uuid == "@") {
    for (auto& info : Show()) {
      if (!info.uuid.empty() && !info.smap.is_null()) uuids.push_back(info.uuid);
    }
  } else {
    auto uuid = ResolveUuid(ns.uuid);
    if (!uuid.ok()) return uuid.status();
    uuids.push_back(*uuid);
  }
  std::vector<RemoteAisBucket> out;
  for (auto& uuid : uuids) {
    auto client = ClientOf(uuid);
    if (!client.ok()) return client.status();
    auto listed = (*client)->ListAisBuckets(ns.name);
    if (!listed.ok()) return listed.status();
    for (auto& b : *listed) out.push_back(std::move(b));
  }
  return out;
}

}  // namespace ais
