// AzureClient: the Azure Blob REST calls the cache tier needs (az:// buckets, provider azure: a
// bucket is a container), on libcurl through PerformHttp (http_call.h), each signed with Shared
// Key (azure_auth.h), with pugixml for the XML replies. Thread-safe; one client per settings.
//
// What it keeps of a blob is what AIS's azure backend keeps: version = ETag, md5 = hex of
// Content-MD5, ETag (unquoted), last modified. A read is the blob's properties, then its bytes
// pinned to that ETag (If-Match: a blob rewritten meanwhile is kConflict, never a mix). Errors
// are worded "azure-error[<Code>: <what>]"; a missing container is kBucketNotFound `azure bucket
// "az://b" does not exist`, a missing blob kNotFound. Multipart uploads are Put Block / Put Block
// List: the upload ID is ours (no Azure call), a part is a block whose ID names the upload and
// the part number, and an abort leaves the uncommitted blocks to expire, as Azure has it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remote/azure_auth.h"
#include "remote/backend.h"
#include "remote/http_call.h"
#include "util/curl_handles.h"

namespace ais {

class AzureClient : public RemoteBackend {
 public:
  explicit AzureClient(AzureSettings settings);
  ~AzureClient() override;
  AzureClient(const AzureClient&) = delete;
  AzureClient& operator=(const AzureClient&) = delete;

  std::string_view provider() const override { return "azure"; }
  std::string Describe() const override { return settings_.Describe(); }

  Result<RemoteBucketInfo> HeadBucket(const std::string& bucket) override;
  Result<std::vector<std::string>> ListBuckets() override;
  Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key) override;
  Status GetObject(const std::string& bucket, const std::string& key,
                   std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                   const OnData& on_data, const RemoteObjectAttrs* known) override;
  // One Put Blob. No user metadata: AIS writes none to Azure (refused rather than dropped).
  Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                      const ReadBody& body, const std::function<Status()>& rewind,
                                      const KeyValues& user_meta) override;
  Status DeleteObject(const std::string& bucket, const std::string& key) override;
  // List Blobs. Azure has no start-after: with `start_after` (and no token) pages are read from
  // the start and those wholly at or before it skipped, so such a call costs a request per
  // `max_keys` keys before it.
  Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                     const std::string& token, uint32_t max_keys, bool delimited,
                                     const std::string& start_after) override;

  bool has_multipart() const override { return true; }
  Result<std::string> CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                            const KeyValues& user_meta) override;
  // Put Block; returns the block ID (what CompleteMultipartUpload lists).
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key, const std::string& upload_id,
                                 uint32_t part, uint64_t size, const ReadBody& body,
                                 const std::function<Status()>& rewind) override;
  // Put Block List of `part_etags` (the block IDs) in order.
  Result<RemoteObjectAttrs> CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const std::string& upload_id,
                                                    const std::vector<std::string>& part_etags) override;
  Status AbortMultipartUpload(const std::string& bucket, const std::string& key,
                              const std::string& upload_id) override;

  // What AIS keeps of a blob from Get Blob Properties' headers (lower-cased names).
  static RemoteObjectAttrs AttrsFromHeaders(const HttpCall::Headers& h);
  // A List Blobs reply; entries with names at or before `start_after` are left out.
  static Result<RemoteListPage> ParseBlobList(std::string_view xml, const std::string& start_after);
  // The block ID of part `part` of upload `upload_id`: base64 of "<upload_id>-%06d".
  static std::string BlockId(const std::string& upload_id, uint32_t part);

 private:
  // Signs and performs `call` about container `bucket` (`object` non-empty: about that blob).
  Status Perform(HttpCall& call, const std::string& bucket, const std::string& object);
  std::string BlobUrl(const std::string& bucket, const std::string& key) const;
  // One List Blobs page.
  Result<RemoteListPage> ListPage(const std::string& bucket, const std::string& prefix, const std::string& marker,
                                  uint32_t max_keys, bool delimited, const std::string& start_after);

  const AzureSettings settings_;
  std::unique_ptr<CurlHandles> handles_;
};

}  // namespace ais
