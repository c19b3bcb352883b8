// BucketProps: per-bucket settings in AIS `Bprops` JSON shape (cmn/api.go); sizes are IEC strings.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/space_config.h"
#include "util/status.h"

namespace ais {

inline constexpr uint64_t kDefaultMaxMonolithic = 1ULL << 40;  // 1 TiB
inline constexpr uint64_t kDefaultChunkSize = 1ULL << 30;      // 1 GiB
inline constexpr uint64_t kMinChunkSize = 1ULL << 10;
inline constexpr uint64_t kMaxChunkSize = 5ULL << 30;
inline constexpr uint32_t kMaxChunks = 9999;
inline constexpr uint64_t kMinMultipartSize = 5ULL << 20;  // S3's smallest part (but the last)
inline constexpr uint64_t kMaxMultipartSize = 5ULL << 30;  // and largest

struct BucketProps {
  std::string checksum_type = "xxhash2";  // AIS 5.0's cluster default
  bool validate_warm_get = false;
  bool enable_read_range = false;
  bool versioning = true;
  uint64_t objsize_limit = 0;        // 0: off; else objects >= limit are chunked on PUT
  uint64_t max_monolithic_size = 0;  // 0 -> kDefaultMaxMonolithic
  uint64_t chunk_size = 0;           // 0 -> kDefaultChunkSize
  uint32_t checkpoint_every = 0;
  int64_t created_ns = 0;
  uint64_t bid = 0;
  // Remote buckets (AIS `extra.aws`, `versioning.*`, `checksum.validate_cold_get`, `features`):
  // where the cache tier fetches from, and when it checks the remote again.
  std::string aws_profile;
  std::string aws_endpoint;
  std::string aws_region;
  int64_t aws_multipart_size = 0;     // extra.aws.multipart_size: 0 default part size, -1 never multipart
  bool validate_cold_get = true;      // verify a fetched object against the remote's MD5/checksum
  bool remote_validate_warm_get = false;  // versioning.validate_warm_get: HEAD the remote on warm GETs
  bool remote_sync = false;           // versioning.synchronize: also drop what the remote deleted
  uint64_t features = 0;              // AIS feature bits of this bucket (cmn/feat)
  // AIS `lru.enabled`: whether the lru job may evict this bucket's objects (only a remote
  // bucket's cached objects are ever evicted). Unset (a bucket from before it was kept): on for
  // a remote bucket. A new bucket takes the cluster's lru.enabled (Store::CreateBucket).
  std::optional<bool> lru_enabled;
  // AIS `access`: the permission bits (auth/access.h) any request on this bucket must also have,
  // tokens or not. All bits by default.
  uint64_t access = ~0ULL;
  // AIS `mirror`: with `enabled`, every object is kept in `copies` copies on as many mountpaths
  // (store/mirror.h). `copies` is kept as set while disabled (AIS validates it only when enabled).
  bool mirror_enabled = false;
  uint32_t mirror_copies = 1;
  // Whether copies may exist (mirroring was ever on): reads then fall over to them and deletes
  // remove them. Set with mirror.enabled, never cleared.
  bool mirror_used = false;

  uint64_t effective_chunk_size() const { return chunk_size ? chunk_size : kDefaultChunkSize; }
  uint64_t effective_max_monolithic() const {
    return max_monolithic_size ? max_monolithic_size : kDefaultMaxMonolithic;
  }
  bool lru_enabled_for(bool remote) const { return remote && lru_enabled.value_or(true); }
  // How many copies of each object to keep (1: no mirror).
  size_t copies() const { return mirror_enabled ? mirror_copies : 1; }
  // Whether a PUT of `size` bytes is stored chunked, and with which chunk size.
  bool ShouldChunk(uint64_t size) const;

  // AIS feature bits that change what this server does (cmn/feat, bucket scope).
  static constexpr uint64_t kFeatDisableColdGet = 1ULL << 11;
  static constexpr uint64_t kFeatS3PathStyle = 1ULL << 14;

  // The full AIS Bprops document (what HEAD bucket returns in Ais-Bucket-Props) of the bucket
  // with this store key (bck.h); its lru durations are the cluster's (`cluster`).
  nlohmann::json ToAisJson(const std::string& key, const SpaceConfig& cluster) const;
  // Applies a (partial) BpropsToSet document; validates every value it touches. What this
  // server does not do is refused, never accepted and ignored: ec.enabled is kNotSupported (501).
  // mirror.copies must be in [2, 32] when mirror.enabled (AIS MirrorConf); that a node has that
  // many mountpaths the store checks (Store::CreateBucket/UpdateBucket). lru.dont_evict_time and lru.capacity_upd_time are
  // the cluster's here (Store::CreateBucket/UpdateBucket check them against it).
  Status Apply(const nlohmann::json& patch);
  // Own persistence (a superset of what Apply accepts). A damaged document is kCorruption.
  nlohmann::json ToStored() const;
  static Result<BucketProps> FromStored(const nlohmann::json& j);
};

}  // namespace ais
