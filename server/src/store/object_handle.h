// ObjectHandle: a committed object opened for reading, the one way to read an object's bytes.
//
// Invariant: its fds stay valid even if the object is overwritten or deleted meanwhile, so a
// handle reads one consistent version; a chunk that vanished under an overwrite is kConflict
// (the reader opens the object again: Store::OpenReading), never bytes of another version.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/file_segment.h"
#include "store/mountpaths.h"
#include "store/object_meta.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

// One read in flight on a mountpath (Mountpaths::reading): counted while it lives. Move-only.
class ReadingOn {
 public:
  ReadingOn() = default;
  explicit ReadingOn(std::atomic<int32_t>* count) : count_(count) {
    if (count_ != nullptr) count_->fetch_add(1, std::memory_order_relaxed);
  }
  ReadingOn(ReadingOn&& o) noexcept : count_(std::exchange(o.count_, nullptr)) {}
  ReadingOn& operator=(ReadingOn&& o) noexcept {
    if (this != &o) {
      Release();
      count_ = std::exchange(o.count_, nullptr);
    }
    return *this;
  }
  ~ReadingOn() { Release(); }

 private:
  void Release() {
    if (count_ != nullptr) count_->fetch_sub(1, std::memory_order_relaxed);
    count_ = nullptr;
  }
  std::atomic<int32_t>* count_ = nullptr;
};

// Chunk files are opened as Slice needs them; after OpenAll, every file is open and the handle
// is read-only: Segments and ReadAt may then be called from any thread (GetBatch shares a
// `std::shared_ptr<const ObjectHandle>` between its threads).
class ObjectHandle {
 public:
  const ObjectMeta& meta() const { return meta_; }
  const std::string& bucket() const { return bucket_; }  // its store key
  uint64_t size() const { return meta_.size; }
  // Segments covering object bytes [start, start+len). Opens the chunk files it needs; a chunk
  // that vanished (concurrent overwrite) is kConflict: re-open and retry (Store::OpenReading).
  // Slice checks each chunk file's length against the manifest as it opens it (kCorruption,
  // also for a chunk that is missing while the object is not overwritten).
  Result<std::vector<FileSegment>> Slice(uint64_t start, uint64_t len);
  // Opens every file of the object now (Slice of all of it); errors as Slice.
  Status OpenAll();
  // The segments covering [start, start+len). REQUIRES: OpenAll() succeeded, start+len <= size().
  std::vector<FileSegment> Segments(uint64_t start, uint64_t len) const;
  // Reads exactly [start, start+len) into buf. REQUIRES: as Segments.
  Status ReadAt(uint64_t start, void* buf, size_t len) const;
  // Re-hashes all of the object's bytes and compares them with its stored checksum (OK when it
  // has none): kCorruption "BAD DATA CHECKSUM: ..." on a mismatch. Reads the whole object: the
  // caller decides when (bucket prop checksum.validate_warm_get, the scrub job).
  Status VerifyChecksum();

 private:
  friend class Store;
  const Mountpaths* mps_ = nullptr;
  std::string bucket_;
  ObjectMeta meta_;
  UniqueFd primary_;
  uint64_t data_offset_ = 0;
  std::map<uint32_t, UniqueFd> chunks_;
  std::vector<FileSegment> all_;  // after OpenAll: the whole object, in order
  std::vector<uint64_t> starts_;  // after OpenAll: object offset of each of all_
  ReadingOn reading_;  // a mirrored object's read, counted on the mountpath it reads from
};

// Chunk `num` of an upload: where ForChunk puts it now, else on another enabled mountpath (it was
// written while the mountpaths' enabled set differed). Upload ids are unique, so any copy found
// is the chunk. kNotFound if it is nowhere and every mountpath is enabled; kIOError if it may be
// on a disabled one.
Result<UniqueFd> OpenChunk(const Mountpaths& mps, const std::string& bucket, const std::string& upload_id,
                           uint32_t num);

}  // namespace ais
