// The inventory object format, shared by its writer (InventoryBuilder) and reader (InventoryCatalog).
//
// An inventory is one chunked object in the system bucket `.sys-inventory`, named
// `ais/@#/<bucket>/<inventory>`, written as a multipart upload with one part per chunk:
//   part 1    the index: JSON {"prefix","started","finished","ntotal","names_per_chunk","props",
//             "chunks":[{"first","last","count","xxhash"}...]}
//   part k+1  chunk k: "AISINV01" | u32 LE count | u64 LE xxh64(payload) | payload
//             payload = count x (u32 LE name_len | name | u32 LE entry_len | entry)
//             where entry is the LsoEnt msgpack map a listing returns; names strictly increase.
// The index lets a listing binary-search the chunk holding a continuation token; the per-chunk
// hash turns a damaged chunk into an error instead of a silently short list.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace ais {

inline constexpr const char* kInventoryBucket = ".sys-inventory";
inline constexpr uint64_t kDefaultNamesPerChunk = 20000;
inline constexpr uint64_t kMinNamesPerChunk = 2;
inline constexpr uint64_t kMaxNamesPerChunk = 640000;

std::string InventoryObjectPrefix(const std::string& bucket);  // "ais/@#/<bucket>/"
std::string InventoryObjectName(const std::string& bucket, const std::string& inventory);

struct InventoryChunkInfo {
  std::string first;
  std::string last;
  uint64_t count = 0;
  std::string xxhash;
};

struct InventoryIndex {
  std::string prefix;
  std::string props;
  int64_t started = 0;
  int64_t finished = 0;
  uint64_t ntotal = 0;
  uint64_t names_per_chunk = 0;
  std::vector<InventoryChunkInfo> chunks;

  std::string ToJson() const;
  static Result<InventoryIndex> FromJson(std::string_view text);
};

// Accumulates one chunk.
class InventoryChunkEncoder {
 public:
  void Add(std::string_view name, std::string_view entry);
  uint64_t count() const { return count_; }
  const std::string& first() const { return first_; }
  const std::string& last() const { return last_; }
  // The encoded chunk and its payload hash; resets the encoder.
  std::string Finish(std::string* xxhash_hex);

 private:
  std::string payload_;
  std::string first_, last_;
  uint64_t count_ = 0;
};

// A decoded chunk: views into `raw`, which it owns.
struct InventoryChunk {
  std::string raw;
  std::vector<std::pair<std::string_view, std::string_view>> entries;  // (name, msgpack entry)
};

// Verifies magic, count and hash (kCorruption on any mismatch).
Result<InventoryChunk> DecodeInventoryChunk(std::string raw);

}  // namespace ais
