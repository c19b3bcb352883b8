// RemoteBackend: what the cache tier asks of a cloud provider (S3: s3_client.h, GCS:
// gcs_client.h, Azure Blob: azure_client.h), and the provider-neutral types of its answers. An
// implementation is thread-safe and maps its provider's errors to AIS's (a missing object is
// kNotFound, a missing bucket kBucketNotFound, messages worded "<provider>-error[...]" as AIS
// words them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace ais {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What the provider says of an object (HEAD, or the headers of a GET).
struct RemoteObjectAttrs {
  std::string provider;       // "aws", "gcp", "azure": the `source` AIS keeps
  uint64_t size = 0;
  std::string etag;           // without quotes; S3: "<md5>-N" for multipart uploads
  std::string md5;            // hex MD5 of the bytes when the provider states it ("" for an S3 multipart upload)
  std::string crc32c;         // GCS: base64 of the big-endian CRC32C, as AIS keeps it
  std::string version;        // S3: version id ("" when unversioned); GCS: generation (decimal); Azure: ETag
  std::string last_modified;  // RFC 1123 GMT
  int64_t mtime_ns = 0;       // the same, parsed
  std::string content_type;
  KeyValues user_meta;        // user metadata, keys lower-cased without the provider's prefix
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
  std::string md5;            // hex, when the listing states it
  std::string version;        // GCS: generation; Azure: ETag
  std::string last_modified;  // RFC 3339, as the provider sent it
  bool is_dir = false;        // a common prefix (delimiter listings)
};

struct RemoteListPage {
  std::vector<RemoteListEntry> entries;  // objects, then common prefixes, each in the provider's order
  std::string next_token;                // empty: the last page
};

struct RemoteBucketInfo {
  std::string region;  // S3: x-amz-bucket-region, when S3 said
  bool versioning = false;
};

class RemoteBackend {
 public:
  // Called once per GET with the object's attributes, before any byte (again when the GET is
  // retried before a byte came).
  using OnAttrs = std::function<Status(const RemoteObjectAttrs&)>;
  // Called with the body's bytes in order; a non-OK status aborts the transfer.
  using OnData = std::function<Status(const char*, size_t)>;
  // Fills `buf` (at most `len` bytes) with the next bytes of a PUT body; returns the count.
  using ReadBody = std::function<Result<size_t>(char* buf, size_t len)>;

  virtual ~RemoteBackend() = default;

  virtual std::string_view provider() const = 0;  // "aws", "gcp", "azure"
  virtual std::string Describe() const = 0;       // the endpoint (and such) for messages; no secret

  virtual Result<RemoteBucketInfo> HeadBucket(const std::string& bucket) = 0;
  virtual Result<std::vector<std::string>> ListBuckets() = 0;  // sorted
  virtual Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key) = 0;
  // GET of the whole object, or of [range->first, range->first + range->second). `known`: what a
  // HEAD just said of it (or null); a backend that can pin a read to that version (GCS: its
  // generation) reads exactly it without asking again, and a changed object is kConflict.
  virtual Status GetObject(const std::string& bucket, const std::string& key,
                           std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                           const OnData& on_data, const RemoteObjectAttrs* known) = 0;
  // PUT of `size` bytes read from `body` in one request; `rewind` restarts the body for a retry
  // (none: no retry).
  virtual Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                              const ReadBody& body, const std::function<Status()>& rewind,
                                              const KeyValues& user_meta) = 0;
  virtual Status DeleteObject(const std::string& bucket, const std::string& key) = 0;
  // One page of at most `max_keys` entries; `delimited`: "/"-delimited, common prefixes as
  // entries with is_dir. `start_after`: only keys strictly after it.
  virtual Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                             const std::string& token, uint32_t max_keys, bool delimited,
                                             const std::string& start_after) = 0;

  // Multipart upload, where the provider has one (has_multipart()): start one (returns its
  // upload ID), upload parts (1..10000; returns the part's ETag), complete with every part's
  // ETag in order, or abort, which frees what the parts hold.
  virtual bool has_multipart() const { return false; }
  virtual Result<std::string> CreateMultipartUpload(const std::string& bucket, const std::string& key,
                                                    const KeyValues& user_meta);
  virtual Result<std::string> UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, uint32_t part, uint64_t size,
                                         const ReadBody& body, const std::function<Status()>& rewind);
  virtual Result<RemoteObjectAttrs> CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                                            const std::string& upload_id,
                                                            const std::vector<std::string>& part_etags);
  virtual Status AbortMultipartUpload(const std::string& bucket, const std::string& key,
                                      const std::string& upload_id);
};

}  // namespace ais
