#include "remote/s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <pugixml.hpp>
#include <sstream>

#include "util/strings.h"

namespace ais {
namespace {

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

using Headers = HttpCall::Headers;

const std::string* Find(const Headers& h, std::string_view name) {
  for (auto& [k, v] : h) {
    if (k == name) return &v;
  }
  return nullptr;
}

RemoteObjectAttrs AttrsFrom(const Headers& h) {
  RemoteObjectAttrs a;
  a.provider = "aws";
  if (auto* cr = Find(h, "content-range")) {  // "bytes a-b/total": the object's size is total
    auto slash = cr->rfind('/');
    if (slash != std::string::npos) a.size = ParseUint(cr->substr(slash + 1)).value_or(0);
  } else if (auto* cl = Find(h, "content-length")) {
    a.size = ParseUint(*cl).value_or(0);
  }
  if (auto* e = Find(h, "etag")) a.etag = Unquote(*e);
  a.md5 = SinglePartMd5(a.etag);
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

}  // namespace

S3Client::S3Client(AwsSettings settings) : settings_(std::move(settings)), handles_(std::make_unique<CurlHandles>()) {}

S3Client::~S3Client() = default;

std::string S3Client::EncodePath(std::string_view key) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    out += PercentEncode(key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
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

Status S3Client::Perform(HttpCall& call, bool object) {
  call.headers.emplace_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
  if (!settings_.session_token.empty()) call.headers.push_back("x-amz-security-token: " + settings_.session_token);
  if (!settings_.anonymous()) {
    call.configure = [this](CURL* c) {  // (curl copies string options)
      curl_easy_setopt(c, CURLOPT_AWS_SIGV4, ("aws:amz:" + settings_.region + ":s3").c_str());
      curl_easy_setopt(c, CURLOPT_USERPWD, (settings_.access_key + ":" + settings_.secret_key).c_str());
    };
  }
  auto error_of = [&](const HttpCall& r) -> Status {
    // An S3 error: <Error><Code>..</Code><Message>..</Message></Error> (none for HEAD).
    const long status = r.status;
    std::string code, message;
    pugi::xml_document doc;
    if (!r.resp_body.empty() && doc.load_buffer(r.resp_body.data(), r.resp_body.size())) {
      code = doc.child("Error").child_value("Code");
      message = doc.child("Error").child_value("Message");
    }
    if (code.empty()) {
      switch (status) {
        case 404: code = object ? "NoSuchKey" : "NoSuchBucket"; break;
        case 403: code = "Forbidden"; break;
        case 401: code = "Unauthorized"; break;
        case 301: code = "PermanentRedirect"; break;
        default: code = "HTTP " + std::to_string(status);
      }
    }
    if (status == 404 && code == "NoSuchBucket") {
      return Status::BucketNotFound("aws bucket \"" + r.what.substr(0, r.what.find('/', 5)) + "\" does not exist (" +
                                    settings_.Describe() + ")");
    }
    if (status == 404) return Status::NotFound("aws-error[" + code + ": " + r.what + "]");
    std::string text = "aws-error[" + code + ": " + (message.empty() ? r.what : message + " " + r.what) + "] (" +
                       settings_.Describe() + ")";
    return BackendStatus(status, std::move(text));
  };
  return PerformHttp(*handles_, call, "aws-error", settings_.Describe(), error_of);
}

Result<RemoteBucketInfo> S3Client::HeadBucket(const std::string& bucket) {
  HttpCall req;
  req.method = "HEAD";
  req.url = Url(bucket, "", "");
  req.what = "s3://" + bucket;
  Status st = Perform(req, false);
  RemoteBucketInfo info;
  if (auto* r = Find(req.resp_headers, "x-amz-bucket-region")) info.region = *r;
  if (req.status == 301 && !info.region.empty()) return info;  // another region: the caller asks there
  if (!st.ok()) {
    if (st.code() == Status::Code::kNotFound || req.status == 404) {
      return Status::BucketNotFound("aws bucket \"s3://" + bucket + "\" does not exist (" + settings_.Describe() + ")");
    }
    return st;
  }
  HttpCall ver;
  ver.url = Url(bucket, "", "versioning=");
  ver.what = req.what;
  if (Status vs = Perform(ver, false); vs.ok()) {
    pugi::xml_document doc;
    if (doc.load_buffer(ver.resp_body.data(), ver.resp_body.size())) {
      info.versioning = std::string(doc.child("VersioningConfiguration").child_value("Status")) == "Enabled";
    }
  }
  return info;
}

Result<std::vector<std::string>> S3Client::ListBuckets() {
  HttpCall req;
  req.url = Url("", "", "");
  req.what = "s3://";
  AIS_RETURN_IF_ERROR(Perform(req, false));
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
  HttpCall req;
  req.method = "HEAD";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  AIS_RETURN_IF_ERROR(Perform(req, true));
  return AttrsFrom(req.resp_headers);
}

Status S3Client::GetObject(const std::string& bucket, const std::string& key,
                           std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                           const OnData& on_data, const RemoteObjectAttrs* /*known*/) {
  HttpCall req;
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  if (range) {
    if (range->second == 0) return Status::InvalidArgument("empty range of " + req.what);
    req.headers.push_back("Range: bytes=" + std::to_string(range->first) + "-" +
                          std::to_string(range->first + range->second - 1));
  }
  req.on_headers = [&](const Headers& h) { return on_attrs(AttrsFrom(h)); };
  req.on_data = &on_data;
  return Perform(req, true);
}

Result<RemoteObjectAttrs> S3Client::PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                              const ReadBody& body, const std::function<Status()>& rewind,
                                              const KeyValues& user_meta) {
  HttpCall req;
  req.method = "PUT";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  req.upload_size = size;
  req.body = &body;
  req.rewind = rewind ? &rewind : nullptr;
  for (auto& [k, v] : user_meta) req.headers.push_back("x-amz-meta-" + k + ": " + v);
  AIS_RETURN_IF_ERROR(Perform(req, true));
  RemoteObjectAttrs a = AttrsFrom(req.resp_headers);
  a.size = size;
  return a;
}

Status S3Client::DeleteObject(const std::string& bucket, const std::string& key) {
  HttpCall req;
  req.method = "DELETE";
  req.url = Url(bucket, key, "");
  req.what = "s3://" + bucket + "/" + key;
  return Perform(req, true);
}

Result<std::string> S3Client::CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const KeyValues& user_meta) {
  HttpCall req;
  req.method = "POST";
  req.url = Url(bucket, key, "uploads=");
  req.what = "s3://" + bucket + "/" + key;
  for (auto& [k, v] : user_meta) req.headers.push_back("x-amz-meta-" + k + ": " + v);
  AIS_RETURN_IF_ERROR(Perform(req, true));
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
  HttpCall req;
  req.method = "PUT";
  // The query in canonical (sorted) order: SigV4 signs it as written.
  req.url = Url(bucket, key, "partNumber=" + std::to_string(part) + "&uploadId=" + PercentEncode(upload_id));
  req.what = "s3://" + bucket + "/" + key + " (part " + std::to_string(part) + ")";
  req.upload_size = size;
  req.body = &body;
  req.rewind = rewind ? &rewind : nullptr;
  AIS_RETURN_IF_ERROR(Perform(req, true));
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
  HttpCall req;
  req.method = "POST";
  req.url = Url(bucket, key, "uploadId=" + PercentEncode(upload_id));
  req.what = "s3://" + bucket + "/" + key;
  req.post_body = xml.str();
  req.headers.push_back("Content-Type: application/xml");  // (curl's default would be a form)
  AIS_RETURN_IF_ERROR(Perform(req, true));
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
  HttpCall req;
  req.method = "DELETE";
  req.url = Url(bucket, key, "uploadId=" + PercentEncode(upload_id));
  req.what = "s3://" + bucket + "/" + key;
  return Perform(req, true);
}

Result<RemoteListPage> S3Client::ListObjects(const std::string& bucket, const std::string& prefix,
                                             const std::string& token, uint32_t max_keys, bool delimited,
                                             const std::string& start_after) {
  // The query in canonical (sorted) order: SigV4 signs it as written.
  std::string q;
  if (!token.empty()) q += "continuation-token=" + PercentEncode(token) + "&";
  if (delimited) q += "delimiter=%2F&";
  q += "encoding-type=url&list-type=2&max-keys=" + std::to_string(max_keys);
  if (!prefix.empty()) q += "&prefix=" + PercentEncode(prefix);
  if (!start_after.empty()) q += "&start-after=" + PercentEncode(start_after);
  HttpCall req;
  req.url = Url(bucket, "", q);
  req.what = "s3://" + bucket;
  AIS_RETURN_IF_ERROR(Perform(req, false));
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
    e.md5 = SinglePartMd5(e.etag);
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
