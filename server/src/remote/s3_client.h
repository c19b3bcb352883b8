// S3Client: the S3 REST calls the cache tier needs, on libcurl (which signs them, AWS SigV4) with
// pugixml for the XML replies. One client per (endpoint, region, credentials); thread-safe:
// every call takes an easy handle from the client's pool, so connections are kept alive across
// calls and threads.
//
// Errors carry AIS's wording (`aws-error[<Code>: <what>]`) and the status AIS gives: a missing key
// or bucket is kNotFound/kBucketNotFound, 401/403 are kUnauthorized/kForbidden, throttling is
// kTooManyRequests/kUnavailable, a transport failure kIOError. Requests go through PerformHttp
// (http_call.h), which retries them. Credentials never appear in a message.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "remote/aws_config.h"
#include "remote/backend.h"
#include "remote/http_call.h"
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

class S3Client : public RemoteBackend {
 public:
  explicit S3Client(AwsSettings settings);
  ~S3Client() override;
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const AwsSettings& settings() const { return settings_; }
  std::string_view provider() const override { return "aws"; }
  std::string Describe() const override { return settings_.Describe(); }

  Result<RemoteBucketInfo> HeadBucket(const std::string& bucket) override;
  Result<std::vector<std::string>> ListBuckets() override;
  Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key) override;
  // GET of the whole object, or of [range->first, range->first + range->second).
  Status GetObject(const std::string& bucket, const std::string& key,
                   std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                   const OnData& on_data, const RemoteObjectAttrs* known) override;  // (known: unused)
  // PUT of `size` bytes read from `body`; `rewind` restarts the body for a retry (none: no retry).
  Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                      const ReadBody& body, const std::function<Status()>& rewind,
                                      const KeyValues& user_meta) override;
  Status DeleteObject(const std::string& bucket, const std::string& key) override;

  // Multipart upload (objects over S3's 5 GiB single-PUT limit, or larger than a bucket's
  // extra.aws.multipart_size); parts but the last >= 5 MiB.
  bool has_multipart() const override { return true; }
  Result<std::string> CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                            const KeyValues& user_meta) override;
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key, const std::string& upload_id,
                                 uint32_t part, uint64_t size, const ReadBody& body,
                                 const std::function<Status()>& rewind) override;
  Result<RemoteObjectAttrs> CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const std::string& upload_id,
                                                    const std::vector<std::string>& part_etags) override;
  Status AbortMultipartUpload(const std::string& bucket, const std::string& key,
                              const std::string& upload_id) override;
  // ListObjectsV2; delimiter "/" makes common prefixes entries with is_dir. `start_after`: keys
  // strictly after it (S3 ignores it once a continuation token is given).
  Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                     const std::string& token, uint32_t max_keys, bool delimited,
                                     const std::string& start_after) override;

  // S3's object-key encoding of a path: every byte but unreserved ones and '/' as %XX.
  static std::string EncodePath(std::string_view key);

 private:
  // Signs and performs `call`; `object`: a request about an object (a 404 is no such key).
  Status Perform(HttpCall& call, bool object);
  std::string Url(const std::string& bucket, const std::string& key, const std::string& query) const;

  const AwsSettings settings_;
  std::unique_ptr<CurlHandles> handles_;
};

}  // namespace ais
