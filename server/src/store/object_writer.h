// ObjectWriter: one PUT streamed to disk and committed (committer.h: the protocol).
//
// Invariant: nothing of the object is visible before Commit() succeeds; a writer destroyed, or a
// write or commit that fails, leaves nothing behind (its temp file or chunks are removed at once).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/bucket_props.h"
#include "store/bucket_registry.h"
#include "store/committer.h"
#include "util/file_segment.h"
#include "store/object_meta.h"
#include "store/volume.h"
#include "util/checksum.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

struct PutOptions {
  std::optional<uint64_t> size;  // Content-Length when known; needed to choose chunking
  std::vector<std::pair<std::string, std::string>> custom;
  std::string client_cksum_type;  // validate against this if both are set
  std::string client_cksum_value;
  // The expected checksum is a stored object's (copy, rewrite): a mismatch means the stored bytes
  // are damaged (kCorruption), not that the request is wrong (kInvalidArgument).
  bool cksum_from_store = false;
  // Rechunk: force the layout (0 = monolithic) and keep version/atime/checksum/custom of `expect`.
  std::optional<uint64_t> force_chunk_size;
  std::optional<ObjectMeta> expect;
};

// A remote bucket's write, run just before its commit: uploads the object's bytes (`segs` in
// order, `size` bytes) to the backend and returns the custom metadata to merge into the object
// (what the backend said of it). A failure fails the write: nothing is committed.
using WriteThroughFn = std::function<Result<std::vector<std::pair<std::string, std::string>>>(
    const std::vector<FileSegment>& segs, uint64_t size)>;

// Streams one PUT to disk (Store::BeginPut).
class ObjectWriter {
 public:
  ~ObjectWriter();
  Status Write(const void* data, size_t len);
  // The commit point. On success *meta describes the new object.
  Status Commit(ObjectMeta* meta);
  // Opens the files written so far for reading: *segs are the object's bytes in order, valid
  // while *fds stay open (a write-through to a remote backend reads them before the commit).
  // REQUIRES: neither committed nor aborted.
  Status OpenWritten(std::vector<UniqueFd>* fds, std::vector<FileSegment>* segs);
  uint64_t written() const { return written_; }
  // Merges `md` into the custom metadata the commit will store (what a backend said of the
  // object). REQUIRES: before Commit.
  void MergeCustom(const std::vector<std::pair<std::string, std::string>>& md);

 private:
  friend class Store;  // BeginPut constructs and Inits it
  // A monolithic object of a known size up to this is kept in memory and written with its
  // header in one write at Commit (no temp file before then).
  static constexpr uint64_t kBufferedMax = 64 << 10;

  ObjectWriter(Committer* commit, Volume* volume, const BucketRegistry* buckets, std::string bucket, std::string name,
               BucketProps props, PutOptions opts);
  Status Init();
  // Runs `open` (a file on primary_mp_); a failure that the health check blames on that
  // mountpath disables it, and `open` runs once more on the next one.
  Status OnPrimary(const std::function<Status()>& open);
  Status OpenTemp();
  // Moves the buffered bytes into a temp file (a reader of OpenWritten needs a file).
  Status Unbuffer();
  Status OpenNextChunk();
  // A failed write aborts the writer (its files are removed at once); an I/O error that is not a
  // full disk also runs the health check on that mountpath.
  Status CheckedWriteError(Status st);
  Status Abort();

  Committer* const commit_;
  Volume* const volume_;
  const BucketRegistry* const buckets_;
  const std::string bucket_;
  const std::string name_;
  const BucketProps props_;
  const PutOptions opts_;
  size_t primary_mp_ = 0;
  uint64_t chunk_size_ = 0;  // 0: monolithic
  bool buffering_ = false;   // monolithic and small: the bytes are in buffered_, no file yet
  std::string buffered_;
  ObjectMeta meta_;
  std::unique_ptr<Checksummer> cksum_;
  std::unique_ptr<Checksummer> client_cksum_;  // only when the client's type differs from the bucket's
  UniqueFd fd_;              // temp file (monolithic) or the current chunk file
  size_t fd_mp_ = 0;         // the mountpath fd_ is on
  std::string temp_path_;
  uint64_t data_offset_ = 0;
  uint64_t written_ = 0;     // object bytes so far
  uint64_t chunk_fill_ = 0;  // bytes in the current chunk
  std::vector<size_t> chunk_mps_;  // the mountpath of each chunk so far
  bool done_ = false;
};

// Commits `w`; with `through`, its bytes go to the remote backend first and what the backend said
// of them joins the custom metadata (a failure there commits nothing).
Status CommitThrough(ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through);

}  // namespace ais
