#include "remote/azure_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <pugixml.hpp>
#include <sstream>

#include "util/base64.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr uint32_t kAzureMaxListPage = 5000;  // List Blobs' maxresults limit
constexpr uint32_t kAzureMaxBucketPages = 1000;

std::string AzureUnquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

std::string AzureHex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// Content-MD5 (base64 of the 16 bytes) as the hex AIS keeps; "" when absent or malformed.
std::string Md5Hex(std::string_view b64) {
  auto md5 = DecodeBase64(b64);
  return md5 && md5->size() == 16 ? AzureHex(*md5) : std::string();
}

int64_t HttpDateNs(const std::string& s) {
  time_t t = curl_getdate(s.c_str(), nullptr);
  return t > 0 ? static_cast<int64_t>(t) * 1'000'000'000 : 0;
}

std::string HttpDateNow() {
  time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

std::string Rfc3339Of(int64_t unix_ns) {
  time_t t = static_cast<time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, n);
}

const std::string* FindHeader(const HttpCall::Headers& h, std::string_view name) {
  for (auto& [k, v] : h) {
    if (k == name) return &v;
  }
  return nullptr;
}

// A name in a List Blobs reply: percent-encoded when it holds what XML cannot (Encoded="true").
std::string BlobName(pugi::xml_node name) {
  std::string v = name.child_value();
  if (name.attribute("Encoded").as_bool()) return PercentDecode(v, false).value_or(v);
  return v;
}

// The first line of an Azure error message ("...\nRequestId:...\nTime:...").
std::string FirstLine(std::string s) {
  if (auto nl = s.find_first_of("\r\n"); nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

AzureClient::AzureClient(AzureSettings settings)
    : settings_(std::move(settings)), handles_(std::make_unique<CurlHandles>()) {}

AzureClient::~AzureClient() = default;

RemoteObjectAttrs AzureClient::AttrsFromHeaders(const HttpCall::Headers& h) {
  RemoteObjectAttrs a;
  a.provider = "azure";
  if (auto* cr = FindHeader(h, "content-range")) {  // "bytes a-b/total": the blob's size is total
    auto slash = cr->rfind('/');
    if (slash != std::string::npos) a.size = ParseUint(cr->substr(slash + 1)).value_or(0);
  } else if (auto* cl = FindHeader(h, "content-length")) {
    a.size = ParseUint(*cl).value_or(0);
  }
  if (auto* e = FindHeader(h, "etag")) a.etag = AzureUnquote(*e);
  a.version = a.etag;
  if (auto* md5 = FindHeader(h, "content-md5")) a.md5 = Md5Hex(*md5);
  if (auto* lm = FindHeader(h, "last-modified")) {
    a.last_modified = *lm;
    a.mtime_ns = HttpDateNs(*lm);
  }
  if (auto* ct = FindHeader(h, "content-type")) a.content_type = *ct;
  for (auto& [k, v] : h) {
    if (k.starts_with("x-ms-meta-")) a.user_meta.emplace_back(k.substr(10), v);
  }
  return a;
}

Result<RemoteListPage> AzureClient::ParseBlobList(std::string_view xml, const std::string& start_after) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return Status::IOError("azure-error[List Blobs: unparsable reply]");
  auto root = doc.child("EnumerationResults");
  if (!root) return Status::IOError("azure-error[List Blobs: no EnumerationResults in the reply]");
  auto after = [&](const std::string& name) { return start_after.empty() || name > start_after; };
  RemoteListPage page;
  auto blobs = root.child("Blobs");
  for (auto b : blobs.children("Blob")) {
    auto props = b.child("Properties");
    RemoteListEntry e;
    e.name = BlobName(b.child("Name"));
    if (!after(e.name)) continue;
    e.size = ParseUint(props.child_value("Content-Length")).value_or(0);
    e.etag = AzureUnquote(props.child_value("Etag"));
    e.md5 = Md5Hex(props.child_value("Content-MD5"));
    e.version = e.etag;
    if (int64_t ns = HttpDateNs(props.child_value("Last-Modified")); ns > 0) e.last_modified = Rfc3339Of(ns);
    page.entries.push_back(std::move(e));
  }
  for (auto p : blobs.children("BlobPrefix")) {
    RemoteListEntry e;
    e.name = BlobName(p.child("Name"));
    // A prefix holding start_after holds names after it too.
    if (!after(e.name) && !start_after.starts_with(e.name)) continue;
    e.is_dir = true;
    page.entries.push_back(std::move(e));
  }
  page.next_token = root.child_value("NextMarker");
  return page;
}

std::string AzureClient::BlockId(const std::string& upload_id, uint32_t part) {
  char num[16];
  std::snprintf(num, sizeof(num), "-%06u", part);
  return EncodeBase64(upload_id + num);
}

Status AzureClient::Perform(HttpCall& call, const std::string& bucket, const std::string& object) {
  call.headers.push_back("x-ms-date: " + HttpDateNow());
  call.headers.push_back("x-ms-version: " + std::string(kAzureApiVersion));
  std::vector<std::string> signed_headers = call.headers;
  if (call.upload_size) signed_headers.push_back("Content-Length: " + std::to_string(*call.upload_size));
  const std::string to_sign = AzureStringToSign(call.method, call.url, signed_headers, settings_.account);
  call.headers.push_back("Authorization: SharedKey " + settings_.account + ":" +
                         AzureSignature(settings_.key, to_sign));
  auto error_of = [&](const HttpCall& r) -> Status {
    // <Error><Code>..</Code><Message>..</Message></Error>; a HEAD has only x-ms-error-code.
    std::string code, message;
    if (auto* c = r.Header("x-ms-error-code")) code = *c;
    pugi::xml_document doc;
    if (!r.resp_body.empty() && doc.load_buffer(r.resp_body.data(), r.resp_body.size())) {
      if (code.empty()) code = doc.child("Error").child_value("Code");
      message = FirstLine(doc.child("Error").child_value("Message"));
    }
    const bool container_missing = code == "ContainerNotFound" ||
                                   (object.empty() && (r.status == 404 || code == "OutOfRangeInput"));
    if (container_missing) return Status::BucketNotFound("azure bucket \"az://" + bucket + "\" does not exist");
    if (r.status == 404) return Status::NotFound("azure-error[NotFound: " + r.what + "]");
    if (code.empty()) code = "HTTP " + std::to_string(r.status);
    std::string text = "azure-error[" + code + ": " + (message.empty() ? r.what : message + " " + r.what) + "] (" +
                       settings_.Describe() + ")";
    return BackendStatus(static_cast<int>(r.status), std::move(text));
  };
  return PerformHttp(*handles_, call, "azure-error", settings_.Describe(), error_of);
}

std::string AzureClient::BlobUrl(const std::string& bucket, const std::string& key) const {
  // Each '/'-separated segment escaped ('/' kept): the path Shared Key signs as sent.
  std::string out = settings_.endpoint + "/" + PercentEncode(bucket) + "/";
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    const size_t len = slash == std::string::npos ? std::string::npos : slash - start;
    out += PercentEncode(std::string_view(key).substr(start, len));
    if (slash == std::string::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

Result<RemoteBucketInfo> AzureClient::HeadBucket(const std::string& bucket) {
  HttpCall call;
  call.method = "HEAD";
  call.url = settings_.endpoint + "/" + PercentEncode(bucket) + "?restype=container";
  call.what = "az://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, ""));
  return RemoteBucketInfo{.region = "", .versioning = true};  // AIS reports azure buckets versioned (by ETag)
}

Result<std::vector<std::string>> AzureClient::ListBuckets() {
  std::vector<std::string> out;
  std::string marker;
  for (uint32_t page = 0; page < kAzureMaxBucketPages; ++page) {
    HttpCall call;
    call.url = settings_.endpoint + "/?comp=list";
    if (!marker.empty()) call.url += "&marker=" + PercentEncode(marker);
    call.what = "az://";
    AIS_RETURN_IF_ERROR(Perform(call, "", ""));
    pugi::xml_document doc;
    if (!doc.load_buffer(call.resp_body.data(), call.resp_body.size())) {
      return Status::IOError("azure-error[List Containers: unparsable reply] (" + settings_.Describe() + ")");
    }
    auto root = doc.child("EnumerationResults");
    for (auto c : root.child("Containers").children("Container")) out.emplace_back(c.child_value("Name"));
    marker = root.child_value("NextMarker");
    if (marker.empty()) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<RemoteObjectAttrs> AzureClient::HeadObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.method = "HEAD";
  call.url = BlobUrl(bucket, key);
  call.what = "az://" + bucket + "/" + key;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  return AttrsFromHeaders(call.resp_headers);
}

Status AzureClient::GetObject(const std::string& bucket, const std::string& key,
                              std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                              const OnData& on_data, const RemoteObjectAttrs* known) {
  const std::string what = "az://" + bucket + "/" + key;
  if (range && range->second == 0) return Status::InvalidArgument("empty range of " + what);
  const bool pinned = known && !known->etag.empty();
  auto attrs = pinned ? Result<RemoteObjectAttrs>(*known) : HeadObject(bucket, key);
  if (!attrs.ok()) return attrs.status();
  if (range && range->first + range->second > attrs->size) {
    return Status::RangeNotSatisfiable("azure-error[range " + std::to_string(range->first) + "+" +
                                       std::to_string(range->second) + " beyond the " + std::to_string(attrs->size) +
                                       " bytes of " + what + "]");
  }
  HttpCall call;
  call.url = BlobUrl(bucket, key);
  call.what = what;
  // Pinned to the ETag its attributes describe: a blob rewritten meanwhile is 412, not a mix.
  if (!attrs->etag.empty()) call.headers.push_back("If-Match: \"" + attrs->etag + "\"");
  if (range) {
    call.headers.push_back("x-ms-range: bytes=" + std::to_string(range->first) + "-" +
                           std::to_string(range->first + range->second - 1));
  }
  call.on_headers = [&](const HttpCall::Headers&) { return on_attrs(*attrs); };
  call.on_data = &on_data;
  Status st = Perform(call, bucket, key);
  if (call.status == 412) return Status::Conflict(what + " changed remotely (ETag " + attrs->etag + " is gone)");
  return st;
}

Result<RemoteObjectAttrs> AzureClient::PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                                 const ReadBody& body, const std::function<Status()>& rewind,
                                                 const KeyValues& user_meta) {
  if (!user_meta.empty()) {
    return Status::NotSupported("azure: user metadata on upload is not supported (az://" + bucket + "/" + key + ")");
  }
  HttpCall call;
  call.method = "PUT";
  call.url = BlobUrl(bucket, key);
  call.what = "az://" + bucket + "/" + key;
  call.headers.emplace_back("x-ms-blob-type: BlockBlob");
  call.upload_size = size;
  call.body = &body;
  call.rewind = rewind ? &rewind : nullptr;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  RemoteObjectAttrs a = AttrsFromHeaders(call.resp_headers);
  a.size = size;
  a.md5.clear();  // (Put Blob's Content-MD5 is not kept: AIS keeps none after a PUT)
  a.content_type.clear();
  return a;
}

Status AzureClient::DeleteObject(const std::string& bucket, const std::string& key) {
  HttpCall call;
  call.method = "DELETE";
  call.url = BlobUrl(bucket, key);
  call.what = "az://" + bucket + "/" + key;
  return Perform(call, bucket, key);
}

Result<RemoteListPage> AzureClient::ListPage(const std::string& bucket, const std::string& prefix,
                                             const std::string& marker, uint32_t max_keys, bool delimited,
                                             const std::string& start_after) {
  HttpCall call;
  call.url = settings_.endpoint + "/" + PercentEncode(bucket) + "?restype=container&comp=list&maxresults=" +
             std::to_string(std::clamp<uint32_t>(max_keys, 1, kAzureMaxListPage));
  if (!prefix.empty()) call.url += "&prefix=" + PercentEncode(prefix);
  if (delimited) call.url += "&delimiter=%2F";
  if (!marker.empty()) call.url += "&marker=" + PercentEncode(marker);
  call.what = "az://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, ""));
  auto page = ParseBlobList(call.resp_body, start_after);
  if (!page.ok()) return Status::IOError(page.status().message() + " (" + call.what + ")");
  return page;
}

Result<RemoteListPage> AzureClient::ListObjects(const std::string& bucket, const std::string& prefix,
                                                const std::string& token, uint32_t max_keys, bool delimited,
                                                const std::string& start_after) {
  if (!token.empty() || start_after.empty()) return ListPage(bucket, prefix, token, max_keys, delimited, "");
  // No start-after in List Blobs: read on until a page has names after it (or the listing ends).
  std::string marker;
  while (true) {
    auto page = ListPage(bucket, prefix, marker, max_keys, delimited, start_after);
    if (!page.ok() || !page->entries.empty() || page->next_token.empty()) return page;
    marker = page->next_token;
  }
}

Result<std::string> AzureClient::CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                                       const KeyValues& user_meta) {
  if (!user_meta.empty()) {
    return Status::NotSupported("azure: user metadata on upload is not supported (az://" + bucket + "/" + key + ")");
  }
  return RandomId(24);  // no Azure call: blocks are staged under IDs that name it
}

Result<std::string> AzureClient::UploadPart(const std::string& bucket, const std::string& key,
                                            const std::string& upload_id, uint32_t part, uint64_t size,
                                            const ReadBody& body, const std::function<Status()>& rewind) {
  const std::string id = BlockId(upload_id, part);
  HttpCall call;
  call.method = "PUT";
  call.url = BlobUrl(bucket, key) + "?comp=block&blockid=" + PercentEncode(id);
  call.what = "az://" + bucket + "/" + key + " (part " + std::to_string(part) + ")";
  call.upload_size = size;
  call.body = &body;
  call.rewind = rewind ? &rewind : nullptr;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  return id;
}

Result<RemoteObjectAttrs> AzureClient::CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                               const std::string& /*upload_id*/,
                                                               const std::vector<std::string>& part_etags) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "utf-8";
  auto root = doc.append_child("BlockList");
  for (const std::string& id : part_etags) root.append_child("Latest").text().set(id.c_str());
  std::ostringstream xml;
  doc.save(xml, "", pugi::format_raw);
  const std::string text = xml.str();
  size_t pos = 0;
  ReadBody body = [&](char* buf, size_t len) -> Result<size_t> {
    const size_t n = std::min(len, text.size() - pos);
    std::memcpy(buf, text.data() + pos, n);
    pos += n;
    return n;
  };
  std::function<Status()> rewind = [&] {
    pos = 0;
    return Status::OK();
  };
  HttpCall call;
  call.method = "PUT";
  call.url = BlobUrl(bucket, key) + "?comp=blocklist";
  call.what = "az://" + bucket + "/" + key;
  call.headers.emplace_back("Content-Type: application/xml");
  call.upload_size = text.size();
  call.body = &body;
  call.rewind = &rewind;
  AIS_RETURN_IF_ERROR(Perform(call, bucket, key));
  RemoteObjectAttrs a = AttrsFromHeaders(call.resp_headers);
  a.md5.clear();
  a.content_type.clear();
  return a;
}

Status AzureClient::AbortMultipartUpload(const std::string&, const std::string&, const std::string&) {
  return Status::OK();  // uncommitted blocks expire in Azure (a week); nothing to free now
}

}  // namespace ais
