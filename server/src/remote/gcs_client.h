// GcsClient: the Google Cloud Storage JSON API calls the cache tier needs (gs:// buckets, provider
// gcp), on libcurl through PerformHttp (http_call.h) with nlohmann-json for the replies. Where
// requests go and how they are authorized: gcs_auth.h. Thread-safe; one client per settings.
//
// What it keeps of an object is what AIS's GCP backend keeps: version = generation, md5 = hex of
// md5Hash, crc32c = base64 as GCS sends it, ETag. A read is the object's metadata, then its media
// pinned to that generation. Errors are worded "gcp-error[...]"; a missing bucket is
// kBucketNotFound `gcp bucket "gs://b" does not exist`, a missing object kNotFound, a 403 that
// "may not exist" kNotFound. Multipart uploads: none (GCS's XML multipart API needs HMAC keys);
// every upload is one media request.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remote/backend.h"
#include "remote/gcs_auth.h"
#include "remote/http_call.h"
#include "util/curl_handles.h"

namespace ais {

class GcsClient : public RemoteBackend {
 public:
  explicit GcsClient(GcsSettings settings);
  ~GcsClient() override;
  GcsClient(const GcsClient&) = delete;
  GcsClient& operator=(const GcsClient&) = delete;

  const GcsSettings& settings() const { return settings_; }
  std::string_view provider() const override { return "gcp"; }
  std::string Describe() const override { return settings_.Describe(); }

  Result<RemoteBucketInfo> HeadBucket(const std::string& bucket) override;
  Result<std::vector<std::string>> ListBuckets() override;
  Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key) override;
  Status GetObject(const std::string& bucket, const std::string& key,
                   std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                   const OnData& on_data, const RemoteObjectAttrs* known) override;
  // No user metadata: a media upload carries none (refused rather than dropped).
  Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                      const ReadBody& body, const std::function<Status()>& rewind,
                                      const KeyValues& user_meta) override;
  Status DeleteObject(const std::string& bucket, const std::string& key) override;
  // GCS's startOffset is inclusive: `start_after` itself (and anything before it, should a server
  // ignore startOffset) is dropped from the page.
  Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                     const std::string& token, uint32_t max_keys, bool delimited,
                                     const std::string& start_after) override;

  // What AIS keeps of a JSON API object resource.
  static RemoteObjectAttrs AttrsFromResource(const nlohmann::json& o);

 private:
  // Authorizes (a bearer token, unless the emulator) and performs `call` about `bucket`
  // (`object` non-empty: about that object).
  Status Perform(HttpCall& call, const std::string& bucket, const std::string& object);
  Result<std::string> AccessToken();  // cached until a minute before it expires
  std::string ObjectUrl(const std::string& bucket, const std::string& key) const;

  const GcsSettings settings_;
  std::unique_ptr<CurlHandles> handles_;
  std::mutex token_mu_;
  std::string token_;          // guarded by token_mu_
  int64_t token_expiry_ = 0;   // Unix seconds; guarded by token_mu_
};

}  // namespace ais
