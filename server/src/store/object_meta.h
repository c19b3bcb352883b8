// ObjectMeta: what the store knows about one committed object, and its on-disk header.
//
// Object file format (docs/storage-format.md):
//   [0,8)    magic "AISOBJ01"
//   [8,12)   u32 little-endian meta_len
//   [12,16)  u32 little-endian data_offset (multiple of 4096; 0 for chunked objects: no inline data)
//   [16,16+meta_len)  msgpack map (keys below)
//   [data_offset, data_offset+size)  object bytes (monolithic objects only)
// A chunked object's file holds only the header; chunk k (1-based) lives in chunk file
// `<mountpath>/ais/<bucket>/%ch/<upload_id>/<kkkk>` on the mountpath ChunkPlacement picks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace ais {

inline constexpr size_t kObjHeaderSize = 16;
inline constexpr uint64_t kDataAlign = 4096;

struct ObjectMeta {
  std::string name;
  uint64_t size = 0;
  uint64_t version = 0;
  std::string cksum_type;   // "" when the bucket checksum is "none"
  std::string cksum_value;
  int64_t atime_ns = 0;     // last write (AIS updates it on read too; we do not write on GET)
  std::vector<std::pair<std::string, std::string>> custom;  // ordered by key
  // Chunked objects only:
  std::string upload_id;             // names the chunk directory
  std::vector<uint64_t> chunk_sizes; // in order; chunk k covers [sum(sizes[<k]), +sizes[k])

  bool chunked() const { return !upload_id.empty(); }
  // The value of custom metadata `key`, or null.
  const std::string* custom_value(std::string_view key) const {
    for (const auto& [k, v] : custom) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  uint64_t max_chunk_size() const;
};

// Sets each of `md`'s keys in `custom` (kept sorted by key), replacing a key's earlier value.
void MergeCustomInto(std::vector<std::pair<std::string, std::string>>* custom,
                     const std::vector<std::pair<std::string, std::string>>& md);

// Serialized header (magic + lengths + meta) padded to data_offset for monolithic objects.
// `reserve_meta` grows the padding so a later rewrite with a longer checksum still fits.
std::string EncodeObjectHeader(const ObjectMeta& meta, bool inline_data, uint64_t* data_offset);
// The header's metadata alone (its msgpack map, as in the file), and back: what a snapshot of
// kept headers stores (HeaderCache::Save).
std::string EncodeObjectMeta(const ObjectMeta& meta);
Result<ObjectMeta> DecodeObjectMeta(std::string_view packed);
// Reads and decodes the header of an open object file.
Result<ObjectMeta> ReadObjectHeader(int fd, uint64_t* data_offset);
// The same, also reading the object's first bytes into `ahead` in the same read (one syscall for
// a small object instead of two) when they start right after the header's first block: a
// monolithic object with data_offset == kDataAlign, i.e. all but those with very long metadata.
// *got: object bytes now in ahead[0, *got); 0 when none were read.
Result<ObjectMeta> ReadObjectHeader(int fd, uint64_t* data_offset, std::span<char> ahead, size_t* got);
// The layout every committed object keeps, checked on each open without I/O: a monolithic
// object's data starts 4 KiB aligned after its header and ends where its file ends
// (file_size: st_size of the object file); a chunked object has no inline data, a plain upload
// id (a file name, never a path) and chunk sizes that add up to its size. kCorruption says
// what is off. Chunk files themselves are checked as they are opened (ObjectHandle::Slice).
Status CheckObjectLayout(const ObjectMeta& meta, uint64_t data_offset, uint64_t file_size);
// Upper bound of the header for a meta whose size/checksum/version are not known yet.
uint64_t ReservedDataOffset(const ObjectMeta& meta);

}  // namespace ais
