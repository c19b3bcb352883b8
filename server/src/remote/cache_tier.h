// CacheTier: remote buckets served from the local store. The first read of an object fetches it
// from the backend into a chunked local object (cold GET); later reads are local (warm) until the
// object is evicted or found stale. Writes and deletes go to the backend first, then to the
// store, so the local copy never claims what the remote does not hold.
//
// Every call here blocks on the network: handlers run them on pool() (service/offload.h), never
// on an I/O thread. Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "archive/worker_pool.h"
#include "remote/ais_cluster.h"
#include "remote/aws_config.h"
#include "remote/backend.h"
#include "store/store.h"

namespace ais {

// A blob download (AIS blob downloader): one object fetched by concurrent range reads, each
// straight into its own chunk file.
struct BlobOptions {
  uint64_t chunk_size = 0;  // 0: 4 MiB; clamped to [32 KiB, 16 MiB] (and raised to stay <= 9999 chunks)
  int64_t workers = 0;      // 0: one per chunk up to 8; -1: one at a time; else that many (<= 32)
};

// A cold GET's bytes passed on as they land, for a reply streamed while the object is written:
// `attrs` once before any byte (again if the backend is asked again before a byte came), then the bytes
// in order, the last one held back until the object is committed, so a fetch that fails, or
// fails its checksum, never delivers a whole object. A `data` error aborts the fetch.
struct ColdTee {
  std::function<void(const RemoteObjectAttrs&)> attrs;
  std::function<Status(const char*, size_t)> data;
};

inline constexpr uint32_t kMaxRemotePage = 1000;  // keys per backend listing page (AIS MaxPageSizeAWS, GCP: 1000 too)
inline constexpr uint64_t kDefaultMultipartSize = 128ULL << 20;  // AIS DefaultPartSize

// The part size of a write-through upload of `size` bytes under the bucket's
// extra.aws.multipart_size (0: kDefaultMultipartSize; negative: never multipart), or 0 for a
// single PUT. Objects over 10000 parts get larger parts.
uint64_t MultipartPartSize(int64_t multipart_size, uint64_t size);

struct CacheTierOptions {
  size_t max_threads = 64;  // remote calls in flight; more wait (429) rather than pile up
  bool aws_enabled = true;  // AIS cluster config `backend.aws`
  // The endpoints a bucket's `extra.aws.endpoint` may name (CheckBucketEndpoint).
  std::vector<std::string> allowed_endpoints;
};

class CacheTier {
 public:
  CacheTier(Store& store, CacheTierOptions opts);
  ~CacheTier();  // waits for the pool's threads
  CacheTier(const CacheTier&) = delete;
  CacheTier& operator=(const CacheTier&) = delete;

  WorkerPool& pool() { return pool_; }
  // The remote AIS clusters attached (`ais://@alias/...` buckets).
  AisClusters& ais_clusters() { return ais_clusters_; }
  bool aws_enabled() const { return opts_.aws_enabled; }
  // OK if a bucket may name `endpoint` as its `extra.aws.endpoint` (aws_config.h).
  Status CheckEndpoint(std::string_view endpoint) const {
    return CheckBucketEndpoint(endpoint, opts_.allowed_endpoints);
  }

  // The bucket with store key `key` (bck.h) is in the BMD: if not yet, asks the backend whether
  // it exists and adds it with the region and versioning the backend reports ("add-remote-bck").
  Status AddBucket(const std::string& key);

  // The object is in the store: a cold GET fetches it (validated against the remote's MD5 or
  // AIS checksum when the bucket asks) and commits it in one step, so a failed or cut-off fetch
  // leaves nothing. Concurrent calls for one object share one fetch. Returns the local object.
  // `replace`: fetch even though a local copy exists (it was found stale).
  // With `blob`, the fetch is a blob download (its chunks passed to `tee` in order as they land).
  // With `tee`, a fetch this call makes passes its bytes on (*teed says whether it did: not when
  // another call's fetch served it, or it was cached meanwhile).
  Result<ObjectMeta> ColdGet(const std::string& key, const std::string& name, bool replace = false,
                             const std::optional<BlobOptions>& blob = std::nullopt, ColdTee* tee = nullptr,
                             bool* teed = nullptr);
  // Whether a cold GET of the object is in progress.
  bool Fetching(const std::string& key, const std::string& name);
  // Whether the local copy still is the remote object (size, then version, ETag, MD5 as AIS
  // compares them); kNotFound when the remote no longer has it.
  Result<bool> InSync(const std::string& key, const ObjectMeta& local);
  Result<RemoteObjectAttrs> Head(const std::string& key, const std::string& name);
  Result<RemoteListPage> List(const std::string& key, const std::string& prefix, const std::string& token,
                              uint32_t max_keys, bool delimited, const std::string& start_after = "");
  // Uploads `size` bytes, the file segments `segs` in order, as object `name` (a PUT writes
  // through before its local commit): one PUT, or a multipart upload over the bucket's
  // multipart size. Returns what the remote says of the new object.
  Result<RemoteObjectAttrs> Upload(const std::string& key, const std::string& name,
                                   const std::vector<FileSegment>& segs, uint64_t size);
  // The write-through of a commit into remote bucket `key` (store/object_writer.h): Upload of
  // the written segments as `name`, returning the custom metadata AIS keeps of what the
  // backend then says of the object. The tier must outlive the function.
  WriteThroughFn UploadThrough(const std::string& key, const std::string& name);
  // Deletes the object in the backend (S3 answers OK for a missing key, GCS and Azure 404).
  Status DeleteRemote(const std::string& key, const std::string& name);
  // create-bck and destroy-bck of a remote AIS cluster's bucket (store key `key`): the remote's
  // own, as AIS reverse-proxies them there.
  Status CreateOnRemoteAis(const std::string& key);
  Status DestroyOnRemoteAis(const std::string& key);
  // The buckets of a cloud provider ("aws", "gcp", "azure").
  Result<std::vector<std::string>> ListBuckets(std::string_view provider);
  // Whether `provider`'s buckets are served: aws unless --no-aws-backend; gcp and azure when
  // their environment says where to go (gcs_auth.h, azure_auth.h). Otherwise the error a request gets.
  Status CheckEnabled(std::string_view provider);

  // The custom metadata AIS keeps for a remote object (spec remote-backend §3).
  static std::vector<std::pair<std::string, std::string>> CustomFrom(const RemoteObjectAttrs& a);
  // What the backend says of object `name` as this server describes an object: name, size, custom
  // metadata (sorted); no checksum, version or times of a local copy.
  static ObjectMeta MetaFrom(const std::string& name, const RemoteObjectAttrs& a);

 private:
  struct Flight;  // one cold GET in progress
  // The backend client of a bucket: by its key's provider (a remote AIS cluster: by its UUID),
  // and (aws) its props' endpoint config.
  Result<std::shared_ptr<RemoteBackend>> ClientFor(const std::string& key);
  Result<std::shared_ptr<RemoteBackend>> ClientFor(const std::string& key, const BucketProps& props);
  Result<std::shared_ptr<RemoteBackend>> CloudClientFor(std::string_view provider, const BucketProps& props);
  // The bucket argument of the backend's calls: the name; for a remote AIS cluster's bucket,
  // also its namespace there (AisBucketArg).
  static std::string BackendBucket(const std::string& key);
  Result<std::shared_ptr<RemoteBackend>> GcsClientOf();
  Result<std::shared_ptr<RemoteBackend>> AzureClientOf();
  Result<ObjectMeta> Fetch(const std::string& key, const std::string& name, ColdTee* tee = nullptr);
  Result<ObjectMeta> FetchBlob(const std::string& key, const std::string& name, const BlobOptions& blob,
                               ColdTee* tee = nullptr);

  Store& store_;
  const CacheTierOptions opts_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<RemoteBackend>> clients_;  // by AwsBucketConfig; guarded by mu_
  std::shared_ptr<RemoteBackend> gcs_;    // resolved on first use; guarded by mu_
  std::shared_ptr<RemoteBackend> azure_;  // resolved on first use; guarded by mu_
  AisClusters ais_clusters_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;    // by key + "\n" + name; guarded by mu_
  WorkerPool pool_;  // last: destroyed (joined) first
};

}  // namespace ais
