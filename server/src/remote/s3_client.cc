#include "remote/s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <pugixml.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "util/strings.h"

namespace ais {
namespace {

constexpr int kMaxAttempts = 4;                   // one try and three retries
constexpr long kConnectTimeoutMs = 10'000;
constexpr long kLowSpeedSecs = 30;                // a transfer slower than 1 B/s this long is cut
constexpr size_t kMaxErrorBody = 64 << 10;        // error documents are small; keep no more
constexpr size_t kMaxXmlBody = 32 << 20;          // a listing page of 1000 keys of 1 KiB is ~1.5 MB
constexpr long kReceiveBuffer = 512 << 10;        // bytes handed to a GET's sink per call (curl's default: 16 KiB)

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

// AWS's URI encoding of a query value: every byte but A-Z a-z 0-9 - _ . ~ as %XX, which is
// exactly what curl_easy_escape leaves alone (its handle argument is ignored since 7.82).
std::string EncodeValue(std::string_view v) {
  char* escaped = curl_easy_escape(nullptr, v.data(), static_cast<int>(v.size()));
  if (escaped == nullptr) return {};  // out of memory
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

using Headers = std::vector<std::pair<std::string, std::string>>;  // names lower-cased

const std::string* Find(const Headers& h, std::string_view name) {
  for (auto& [k, v] : h) {
    if (k == name) return &v;
  }
  return nullptr;
}

RemoteObjectAttrs AttrsFrom(const Headers& h) {
  RemoteObjectAttrs a;
  if (auto* cr = Find(h, "content-range")) {  // "bytes a-b/total": the object's size is total
    auto slash = cr->rfind('/');
    if (slash != std::string::npos) a.size = ParseUint(cr->substr(slash + 1)).value_or(0);
  } else if (auto* cl = Find(h, "content-length")) {
    a.size = ParseUint(*cl).value_or(0);
  }
  if (auto* e = Find(h, "etag")) a.etag = Unquote(*e);
  if (auto* v = Find(h, "x-amz-version-id"); v && *v != "null") a.version = *v;
  if (auto* lm = Find(h, "last-modified")) {
    a.last_modified = *lm;
    time_t t = curl_getdate(lm->c_str(), nullptr);
    if (t > 0) a.mtime_ns = static_cast<int64_t>(t) * 1'000'000'000;
  }
  if (auto* ct = Find(h, "content-type")) a.content_type = *ct;
  for (auto& [k, v] : h) {
    if (k.starts_with("x-amz-meta-")) a.user_meta.emplace_back(k.substr(11), v);
  }
  return a;
}

bool Retryable(long status) { return status == 429 || status == 500 || status == 502 || status == 503 || status == 504; }

}  // namespace

struct S3Client::Request {
  std::string method = "GET";
  std::string url;
  std::string what;  // "s3://b" or "s3://b/o": what messages name
  std::vector<std::string> headers;
  bool object = false;  // a request about an object (404 = no such key)
  // PUT body
  std::optional<uint64_t> upload_size;
  const ReadBody* body = nullptr;
  const std::function<Status()>* rewind = nullptr;
  // POST body (small XML documents)
  std::string post_body;
  // GET body for the caller
  const OnAttrs* on_attrs = nullptr;
  const OnData* on_data = nullptr;

  // Results of the last attempt.
  long status = 0;
  Headers resp_headers;
  std::string resp_body;  // the body when it is not the caller's (XML, errors), bounded
  bool delivered = false;  // bytes went to on_data: no retry from here on
  Status callback_status;
  bool attrs_done = false;

  static size_t OnHeader(char* p, size_t size, size_t n, void* self) {
    auto* r = static_cast<Request*>(self);
    std::string_view line(p, size * n);
    if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue, a redirect): start over
      r->resp_headers.clear();
      // OnWrite tells data from an error document by the status.
      auto sp = line.find(' ');
      if (sp != std::string_view::npos) r->status = static_cast<long>(ParseUint(line.substr(sp + 1, 3)).value_or(0));
      return size * n;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      r->resp_headers.emplace_back(Lower(Trim(line.substr(0, colon))), Trim(line.substr(colon + 1)));
    }
    return size * n;
  }

  static size_t OnWrite(char* p, size_t size, size_t n, void* self) {
    auto* r = static_cast<Request*>(self);
    const size_t len = size * n;
    if (r->on_data && r->status >= 200 && r->status < 300) {
      if (!r->attrs_done) {
        r->attrs_done = true;
        if (r->on_attrs) {
          r->callback_status = (*r->on_attrs)(AttrsFrom(r->resp_headers));
          if (!r->callback_status.ok()) return 0;
        }
      }
      r->delivered = true;
      r->callback_status = (*r->on_data)(p, len);
      return r->callback_status.ok() ? len : 0;
    }
    const bool ok = r->status >= 200 && r->status < 300;
    const size_t limit = ok ? kMaxXmlBody : kMaxErrorBody;
    if (r->resp_body.size() + len > limit) {
      if (ok) {  // a reply this server must parse whole: never a truncated one
        r->callback_status = Status::IOError("aws-error[reply larger than " + std::to_string(limit) + " bytes: " +
                                             r->what + "]");
        return 0;
      }
      r->resp_body.append(p, limit - std::min(limit, r->resp_body.size()));  // enough of an error to name it
      return len;
    }
    r->resp_body.append(p, len);
    return len;
  }

  static size_t OnRead(char* buf, size_t size, size_t n, void* self) {
    auto* r = static_cast<Request*>(self);
    auto got = (*r->body)(buf, size * n);
    if (!got.ok()) {
      r->callback_status = got.status();
      return CURL_READFUNC_ABORT;
    }
    return *got;
  }
};

S3Client::S3Client(AwsSettings settings) : settings_(std::move(settings)), handles_(std::make_unique<CurlHandles>()) {
  GlobalInit();
}

S3Client::~S3Client() = default;

std::string S3Client::EncodePath(std::string_view key) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    out += EncodeValue(key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

std::string S3Client::Url(const std::string& bucket, const std::string& key, const std::string& query) const {
  std::string url;
  if (settings_.path_style || bucket.find('.') != std::string::npos || bucket.empty()) {
    url = settings_.endpoint.empty() ? "https://s3." + settings_.region + ".amazonaws.com" : settings_.endpoint;
    if (!bucket.empty()) url += "/" + bucket;
  } else if (settings_.endpoint.empty()) {
    url = "https://" + bucket + ".s3." + settings_.region + ".amazonaws.com";
  } else {
    auto scheme_end = settings_.endpoint.find("://") + 3;
    url = settings_.endpoint.substr(0, scheme_end) + bucket + "." + settings_.endpoint.substr(scheme_end);
  }
  url += "/" + EncodePath(key);
  if (!query.empty()) url += "?" + query;
  return url;
}

Status S3Client::Perform(Request& req) {
  Status last;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) {
      // Exponential backoff with jitter: ~100, 200, 400 ms.
      thread_local std::mt19937 rng{std::random_device{}()};
      auto base = 100 << (attempt - 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(base + static_cast<int>(rng() % (base / 2 + 1))));
      if (req.body) {
        if (!req.rewind) return last;
        if (Status st = (*req.rewind)(); !st.ok()) return st;
      }
    }
    req.status = 0;
    req.resp_headers.clear();
    req.resp_body.clear();
    req.callback_status = Status::OK();
    req.attrs_done = false;

    CURL* c = handles_->Get();
    if (!c) return Status::IOError("aws-error[curl_easy_init failed]");
    curl_slist* hdrs = nullptr;
    hdrs = curl_slist_append(hdrs, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!settings_.session_token.empty()) {
      hdrs = curl_slist_append(hdrs, ("x-amz-security-token: " + settings_.session_token).c_str());
    }
    for (auto& h : req.headers) hdrs = curl_slist_append(hdrs, h.c_str());
    hdrs = curl_slist_append(hdrs, "Expect:");  // no 100-continue round trip before a PUT body
    const std::string sigv4 = "aws:amz:" + settings_.region + ":s3";
    const std::string userpwd = settings_.access_key + ":" + settings_.secret_key;

    curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
    // Only HTTP(S), and no redirects are followed (CURLOPT_FOLLOWLOCATION is off); should that
    // change, they stay on HTTP(S) too.
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, kReceiveBuffer);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, kLowSpeedSecs);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &Request::OnHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &req);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Request::OnWrite);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &req);
    if (!settings_.anonymous()) {
      curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
      curl_easy_setopt(c, CURLOPT_USERPWD, userpwd.c_str());
    }
    if (req.method == "HEAD") {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (req.method == "PUT") {
      curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.upload_size.value_or(0)));
      curl_easy_setopt(c, CURLOPT_READFUNCTION, &Request::OnRead);
      curl_easy_setopt(c, CURLOPT_READDATA, &req);
    } else if (req.method == "POST") {
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.post_body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.post_body.data());
    } else if (req.method != "GET") {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    const std::string curl_error = curl_easy_strerror(rc);
    curl_slist_free_all(hdrs);
    handles_->Put(c);
    req.status = status;

    if (!req.callback_status.ok()) return req.callback_status;  // the caller stopped the transfer
    if (rc != CURLE_OK) {
      last = Status::IOError("aws-error[" + curl_error + "] (" + req.what + "; " + settings_.Describe() + ")");
      if (req.delivered) return last;
      continue;
    }
    if (status >= 200 && status < 300) {
      if (req.on_attrs && !req.attrs_done) {  // an empty body: no write callback came
        req.attrs_done = true;
        return (*req.on_attrs)(AttrsFrom(req.resp_headers));
      }
      return Status::OK();
    }
    // An S3 error: <Error><Code>..</Code><Message>..</Message></Error> (none for HEAD).
    std::string code, message;
    pugi::xml_document doc;
    if (!req.resp_body.empty() && doc.load_buffer(req.resp_body.data(), req.resp_body.size())) {
      code = doc.child("Error").child_value("Code");
      message = doc.child("Error").child_value("Message");
    }
    if (code.empty()) {
      switch (status) {
        case 404: code = req.object ? "NoSuchKey" : "NoSuchBucket"; break;
        case 403: code = "Forbidden"; break;
        case 401: code = "Unauthorized"; break;
        case 301: code = "PermanentRedirect"; break;
        default: code = "HTTP " + std::to_string(status);
      }
    }
    if (status == 404 && code == "NoSuchBucket") {
      return Status::BucketNotFound("aws bucket \"" + req.what.substr(0, req.what.find('/', 5)) +
                                    "\" does not exist (" + settings_.Describe() + ")");
    }
    if (status == 404) return Status::NotFound("aws-error[" + code + ": " + req.what + "]");
    std::string text = "aws-error[" + code + ": " + (message.empty() ? req.what : message + " " + req.what) + "] (" +
                       settings_.Describe() + ")";
    switch (status) {
      case 400: return Status::InvalidArgument(text);
      case 401: return Status::Unauthorized(text);
      case 403: return Status::Forbidden(text);
      case 409: return Status::Conflict(text);
      case 412: return Status::PreconditionFailed(text);
      case 416: return Status::RangeNotSatisfiable(text);
      default: break;
    }
    if (status == 429) {
      last = Status::TooManyRequests(text);
    } else if (status == 503) {
      last = Status::Unavailable(text);
    } else {
      last = Status::IOError(text);
    }
    if (!Retryable(status) || req.delivered) return last;
  }
  return last;
}

Result<RemoteBucketInfo> S3Client::HeadBucket(const std::string& bucket) {
  Request req;
  req.method = "HEAD";
  req.url = Url(bucket, "", "");
  req.what = "s3://" + bucket;
  Status st = Perform(req);
  RemoteBucketInfo info;
  if (auto* r = Find(req.resp_headers, "x-amz-bucket-region")) info.region = *r;
  if (req.status == 301 && !info.region.empty()) return info;  // another region: the caller asks there
  if (!st.ok()) {
    if (st.code() == Status::Code::kNotFound || req.status == 404) {
      return Status::BucketNotFound("aws bucket \"s3://" + bucket + "\" does not exist (" + settings_.Describe() + ")");
    }
    return st;
  }
  Request ver;
  ver.url = Url(bucket, "", "versioning=");
  ver.what = req.what;
  if (Status vs = Perform(ver); vs.ok()) {
    pugi::xml_document doc;
    if (doc.load_buffer(ver.resp_body.data(), ver.resp_body.size())) {
      info.versioning = std::string(doc.child("VersioningConfiguration").child_value("Status")) == "Enabled";
    }
  }
  return info;
}

Result<std::vector<std::string>> S3Client::ListBuckets() {
  Request req;
  req.url = Url("", "", "");
  req.what = "s3://";
  AIS_RETURN_IF_ERROR(Perform(req));
  pugi::xml_document doc;
  if (!doc.load_buffer(req.resp_body.data(), req.resp_body.size())) {
    return Status::IOError("aws-error[ListBuckets: unparsable reply] (" + settings_.Describe() + ")");
  }
  std::vector<std::string> out;
  for (auto b : doc.child("ListAllMyBucketsResult").child("Buckets").children("Bucket")) {
    out.emplace_back(b.child_value("Name"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<RemoteObjectAttrs> S3Client::HeadObject(const std::string& bucket, const std::string& key) {
  Request req;
  req.method = "HEAD";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  AIS_RETURN_IF_ERROR(Perform(req));
  return AttrsFrom(req.resp_headers);
}

Status S3Client::GetObject(const std::string& bucket, const std::string& key,
                           std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                           const OnData& on_data) {
  Request req;
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  if (range) {
    if (range->second == 0) return Status::InvalidArgument("empty range of " + req.what);
    req.headers.push_back("Range: bytes=" + std::to_string(range->first) + "-" +
                          std::to_string(range->first + range->second - 1));
  }
  req.on_attrs = &on_attrs;
  req.on_data = &on_data;
  return Perform(req);
}

Result<RemoteObjectAttrs> S3Client::PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                              const ReadBody& body, const std::function<Status()>& rewind,
                                              const std::vector<std::pair<std::string, std::string>>& user_meta) {
  Request req;
  req.method = "PUT";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  req.upload_size = size;
  req.body = &body;
  req.rewind = rewind ? &rewind : nullptr;
  for (auto& [k, v] : user_meta) req.headers.push_back("x-amz-meta-" + k + ": " + v);
  AIS_RETURN_IF_ERROR(Perform(req));
  RemoteObjectAttrs a = AttrsFrom(req.resp_headers);
  a.size = size;
  return a;
}

Status S3Client::DeleteObject(const std::string& bucket, const std::string& key) {
  Request req;
  req.method = "DELETE";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  return Perform(req);
}

Result<std::string> S3Client::CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const std::vector<std::pair<std::string, std::string>>& user_meta) {
  Request req;
  req.method = "POST";
  req.url = Url(bucket, key, "uploads=");
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  for (auto& [k, v] : user_meta) req.headers.push_back("x-amz-meta-" + k + ": " + v);
  AIS_RETURN_IF_ERROR(Perform(req));
  pugi::xml_document doc;
  std::string id;
  if (doc.load_buffer(req.resp_body.data(), req.resp_body.size())) {
    id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  }
  if (id.empty()) return Status::IOError("aws-error[CreateMultipartUpload: no UploadId in the reply: " + req.what + "]");
  return id;
}

Result<std::string> S3Client::UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, uint32_t part, uint64_t size,
                                         const ReadBody& body, const std::function<Status()>& rewind) {
  Request req;
  req.method = "PUT";
  // The query in canonical (sorted) order: SigV4 signs it as written.
  req.url = Url(bucket, key, "partNumber=" + std::to_string(part) + "&uploadId=" + EncodeValue(upload_id));
  req.what = "s3://" + bucket + "/" + key + " (part " + std::to_string(part) + ")";
  req.object = true;
  req.upload_size = size;
  req.body = &body;
  req.rewind = rewind ? &rewind : nullptr;
  AIS_RETURN_IF_ERROR(Perform(req));
  const std::string* etag = Find(req.resp_headers, "etag");
  if (etag == nullptr || etag->empty()) return Status::IOError("aws-error[UploadPart: no ETag in the reply: " + req.what + "]");
  return Unquote(*etag);
}

Result<RemoteObjectAttrs> S3Client::CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                            const std::string& upload_id,
                                                            const std::vector<std::string>& part_etags) {
  pugi::xml_document body;
  auto root = body.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns") = "http://s3.amazonaws.com/doc/2006-03-01/";
  for (size_t i = 0; i < part_etags.size(); ++i) {
    auto p = root.append_child("Part");
    p.append_child("PartNumber").text().set(static_cast<unsigned>(i + 1));
    p.append_child("ETag").text().set(("\"" + part_etags[i] + "\"").c_str());
  }
  std::ostringstream xml;
  body.save(xml, "", pugi::format_raw);
  Request req;
  req.method = "POST";
  req.url = Url(bucket, key, "uploadId=" + EncodeValue(upload_id));
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  req.post_body = xml.str();
  req.headers.push_back("Content-Type: application/xml");  // (curl's default would be a form)
  AIS_RETURN_IF_ERROR(Perform(req));
  // S3 may answer 200 and still fail: the error is then the body.
  pugi::xml_document doc;
  if (!doc.load_buffer(req.resp_body.data(), req.resp_body.size())) {
    return Status::IOError("aws-error[CompleteMultipartUpload: unparsable reply: " + req.what + "]");
  }
  if (auto err = doc.child("Error")) {
    return Status::IOError("aws-error[" + std::string(err.child_value("Code")) + ": " + err.child_value("Message") +
                           " " + req.what + "]");
  }
  RemoteObjectAttrs a = AttrsFrom(req.resp_headers);
  // CompleteMultipartUploadResult (some servers say ...Response).
  a.etag = Unquote(doc.document_element().child_value("ETag"));
  return a;
}

Status S3Client::AbortMultipartUpload(const std::string& bucket, const std::string& key, const std::string& upload_id) {
  Request req;
  req.method = "DELETE";
  req.url = Url(bucket, key, "uploadId=" + EncodeValue(upload_id));
  req.what = "s3://" + bucket + "/" + key;
  req.object = true;
  return Perform(req);
}

Result<RemoteListPage> S3Client::ListObjects(const std::string& bucket, const std::string& prefix,
                                             const std::string& token, uint32_t max_keys, bool delimited,
                                             const std::string& start_after) {
  // The query in canonical (sorted) order: SigV4 signs it as written.
  std::string q;
  if (!token.empty()) q += "continuation-token=" + EncodeValue(token) + "&";
  if (delimited) q += "delimiter=%2F&";
  q += "encoding-type=url&list-type=2&max-keys=" + std::to_string(max_keys);
  if (!prefix.empty()) q += "&prefix=" + EncodeValue(prefix);
  if (!start_after.empty()) q += "&start-after=" + EncodeValue(start_after);
  Request req;
  req.url = Url(bucket, "", q);
  req.what = "s3://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(req));
  pugi::xml_document doc;
  if (!doc.load_buffer(req.resp_body.data(), req.resp_body.size())) {
    return Status::IOError("aws-error[ListObjectsV2: unparsable reply: s3://" + bucket + "]");
  }
  auto root = doc.child("ListBucketResult");
  const bool url_encoded = std::string(root.child_value("EncodingType")) == "url";
  auto decode = [&](const char* v) {
    if (!url_encoded) return std::string(v);
    return PercentDecode(v, true).value_or(v);
  };
  RemoteListPage page;
  for (auto c : root.children("Contents")) {
    RemoteListEntry e;
    e.name = decode(c.child_value("Key"));
    e.size = ParseUint(c.child_value("Size")).value_or(0);
    e.etag = Unquote(c.child_value("ETag"));
    e.last_modified = c.child_value("LastModified");
    page.entries.push_back(std::move(e));
  }
  for (auto p : root.children("CommonPrefixes")) {
    RemoteListEntry e;
    e.name = decode(p.child_value("Prefix"));
    e.is_dir = true;
    page.entries.push_back(std::move(e));
  }
  if (std::string(root.child_value("IsTruncated")) == "true") page.next_token = root.child_value("NextContinuationToken");
  return page;
}

}  // namespace ais
