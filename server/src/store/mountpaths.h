// Mountpaths: the data directories (one per disk on real machines), where each file lives,
// and how every path below a mountpath is spelled. All file names are built here.
//
//   <mp>/.ais.bmd.json                         bucket metadata (a copy on every mountpath)
//   <mp>/.ais.headers                          object headers kept at the last stop; read at start
//   <mp>/ais/<bucket>/%ob/<encoded name>       object file (header + data, or header only if chunked)
//   <mp>/ais/<bucket>/%ch/<upload id>/<kkkk>   chunk k of a chunked object or multipart upload
//   <mp>/ais/<bucket>/%mi/<encoded name>       a mirror copy: the whole object, header + data
//   <mp>/.ais.work/                            temp files and chunk markers; swept at startup
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ais {

class Mountpaths {
 public:
  // REQUIRES: paths non-empty, absolute, distinct. Sorted so indexes are stable across runs.
  explicit Mountpaths(std::vector<std::string> paths);
  // A snapshot: the copy's enabled flags start as the original's and then live on their own.
  Mountpaths(const Mountpaths& o);
  Mountpaths& operator=(const Mountpaths&) = delete;

  size_t size() const { return paths_.size(); }
  const std::vector<std::string>& paths() const { return paths_; }
  std::optional<size_t> Find(std::string_view path) const;

  // Enabled state (AIS: available vs disabled). A disabled mountpath gets no new objects or
  // chunks and is not read. Thread-safe; the flags are the only mutable state.
  bool enabled(size_t mp) const { return !disabled_[mp].load(std::memory_order_acquire); }
  size_t num_disabled() const { return num_disabled_.load(std::memory_order_acquire); }
  // Returns false if the state was already `on`.
  bool SetEnabled(size_t mp, bool on) const;

  // All mountpaths by highest-random-weight score for bucket/object, best first.
  std::vector<size_t> Ranked(std::string_view bucket, std::string_view object) const;
  // Where a new object goes: the best-ranked enabled mountpath (the HRW choice when all are
  // enabled, so adding a mountpath moves only ~1/N objects). Ranked()[0] when none is enabled.
  size_t PrimaryFor(std::string_view bucket, std::string_view object) const;
  // Chunks of one upload go round-robin from a per-upload start, so every mountpath gets its
  // share; a disabled position passes to the next enabled one in the rotation.
  size_t ForChunk(std::string_view upload_id, uint32_t chunk_num) const;
  // Where the copies - 1 extra copies of an object whose object file is on `primary` go (n-way
  // mirror): the first copies - 1 enabled mountpaths of its HRW ranking, `primary` left out.
  // Fewer when fewer are enabled.
  std::vector<size_t> MirrorSlots(std::string_view bucket, std::string_view object, size_t primary,
                                  size_t copies) const;

  std::string BucketDir(size_t mp, std::string_view bucket) const;
  std::string ObjectsDir(size_t mp, std::string_view bucket) const;
  std::string ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const;
  std::string MirrorDir(size_t mp, std::string_view bucket) const;
  std::string MirrorPath(size_t mp, std::string_view bucket, std::string_view object) const;
  std::string ChunkDir(size_t mp, std::string_view bucket, std::string_view upload_id) const;
  std::string ChunkPath(size_t mp, std::string_view bucket, std::string_view upload_id, uint32_t num) const;
  std::string WorkDir(size_t mp) const;
  std::string BmdPath(size_t mp) const;
  // The headers the server knew when it last stopped (HeaderCache::Save), until it starts again.
  std::string HeaderSnapshotPath(size_t mp) const;

 private:
  std::vector<std::string> paths_;
  std::vector<uint64_t> seeds_;  // per-mountpath hash seed for HRW
  std::unique_ptr<std::atomic<bool>[]> disabled_;
  mutable std::atomic<size_t> num_disabled_{0};
};

}  // namespace ais
