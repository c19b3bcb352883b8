// S3Client: the S3 REST calls the cache tier needs, on libcurl (which signs them, AWS SigV4) with
// pugixml for the XML replies. One client per (endpoint, region, credentials); thread-safe:
// every call takes an easy handle from the client's pool, so connections are kept alive across
// calls and threads.
//
// Errors carry AIS's wording (`aws-error[<Code>: <what>]`) and the status AIS gives: a missing key
// or bucket is kNotFound/kBucketNotFound, 401/403 are kUnauthorized/kForbidden, throttling is
// kTooManyRequests/kUnavailable, a transport failure kIOError. Idempotent calls are retried
// (bounded, with backoff) on transport errors, 500, 503 and 429; a GET only while no byte of it
// has reached the caller. Credentials never appear in a message.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "remote/aws_config.h"
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

// What S3 says of an object (HEAD, or the headers of a GET).
struct RemoteObjectAttrs {
  uint64_t size = 0;
  std::string etag;           // without quotes; "<md5>-N" for multipart uploads
  std::string version;        // version id; empty when the bucket is not versioned ("null")
  std::string last_modified;  // as S3 sent it (RFC 1123 GMT)
  int64_t mtime_ns = 0;       // the same, parsed
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> user_meta;  // x-amz-meta-<k>: v (k as sent)
};

// The MD5 that an S3 ETag is, for a single-part upload (32 hex digits, no "-N" suffix); "" for a
// multipart one, whose ETag is no digest of the bytes.
inline std::string SinglePartMd5(const std::string& etag) {
  return etag.size() == 32 && etag.find('-') == std::string::npos ? etag : std::string();
}

struct RemoteListEntry {
  std::string name;
  uint64_t size = 0;
  std::string etag;           // without quotes
  std::string last_modified;  // RFC 3339, as S3 sent it
  bool is_dir = false;        // a common prefix (delimiter listings)
};

struct RemoteListPage {
  std::vector<RemoteListEntry> entries;  // objects, then common prefixes, each in S3's order
  std::string next_token;                // empty: the last page
};

struct RemoteBucketInfo {
  std::string region;  // x-amz-bucket-region, when S3 said
  bool versioning = false;
};

class S3Client {
 public:
  // Called once per GET with the object's attributes, before any byte.
  using OnAttrs = std::function<Status(const RemoteObjectAttrs&)>;
  // Called with the body's bytes in order; a non-OK status aborts the transfer.
  using OnData = std::function<Status(const char*, size_t)>;
  // Fills `buf` (at most `len` bytes) with the next bytes of a PUT body; returns the count.
  using ReadBody = std::function<Result<size_t>(char* buf, size_t len)>;

  explicit S3Client(AwsSettings settings);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const AwsSettings& settings() const { return settings_; }

  Result<RemoteBucketInfo> HeadBucket(const std::string& bucket);
  Result<std::vector<std::string>> ListBuckets();
  Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key);
  // GET of the whole object, or of [range->first, range->first + range->second).
  Status GetObject(const std::string& bucket, const std::string& key,
                   std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                   const OnData& on_data);
  // PUT of `size` bytes read from `body`; `rewind` restarts the body for a retry (none: no retry).
  Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                      const ReadBody& body, const std::function<Status()>& rewind,
                                      const std::vector<std::pair<std::string, std::string>>& user_meta);
  Status DeleteObject(const std::string& bucket, const std::string& key);

  // Multipart upload (objects over S3's 5 GiB single-PUT limit, or larger than a bucket's
  // extra.aws.multipart_size): start one (returns its upload ID), upload parts (1..10000, each
  // but the last >= 5 MiB; returns the part's ETag), complete with every part's ETag in order,
  // or abort, which frees what the parts hold.
  Result<std::string> CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                            const std::vector<std::pair<std::string, std::string>>& user_meta);
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key, const std::string& upload_id,
                                 uint32_t part, uint64_t size, const ReadBody& body,
                                 const std::function<Status()>& rewind);
  Result<RemoteObjectAttrs> CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const std::string& upload_id,
                                                    const std::vector<std::string>& part_etags);
  Status AbortMultipartUpload(const std::string& bucket, const std::string& key, const std::string& upload_id);
  // ListObjectsV2; delimiter "/" makes common prefixes entries with is_dir. `start_after`: keys
  // strictly after it (S3 ignores it once a continuation token is given).
  Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                     const std::string& token, uint32_t max_keys, bool delimited,
                                     const std::string& start_after = "");

  // S3's object-key encoding of a path: every byte but unreserved ones and '/' as %XX.
  static std::string EncodePath(std::string_view key);

 private:
  struct Request;
  Status Perform(Request& req);
  std::string Url(const std::string& bucket, const std::string& key, const std::string& query) const;

  const AwsSettings settings_;
  std::unique_ptr<CurlHandles> handles_;
};

}  // namespace ais
