// Mountpaths: the data directories (one per disk on real machines), where each file lives,
// and how every path below a mountpath is spelled. All file names are built here.
//
//   <mp>/.ais.bmd.json                         bucket metadata (a copy on every mountpath)
//   <mp>/ais/<bucket>/%ob/<encoded name>       object file (header + data, or header only if chunked)
//   <mp>/ais/<bucket>/%ch/<upload id>/<kkkk>   chunk k of a chunked object or multipart upload
//   <mp>/.ais.work/                            temp files and chunk markers; swept at startup
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ais {

class Mountpaths {
 public:
  // REQUIRES: paths non-empty, absolute, distinct. Sorted so indexes are stable across runs.
  explicit Mountpaths(std::vector<std::string> paths);

  size_t size() const { return paths_.size(); }
  const std::vector<std::string>& paths() const { return paths_; }

  // Highest-random-weight choice: adding a mountpath moves only ~1/N objects.
  size_t PrimaryFor(std::string_view bucket, std::string_view object) const;
  // Chunks of one upload go round-robin from a per-upload start, so every mountpath gets its share.
  size_t ForChunk(std::string_view upload_id, uint32_t chunk_num) const;

  std::string BucketDir(size_t mp, std::string_view bucket) const;
  std::string ObjectsDir(size_t mp, std::string_view bucket) const;
  std::string ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const;
  std::string ChunkDir(size_t mp, std::string_view bucket, std::string_view upload_id) const;
  std::string ChunkPath(size_t mp, std::string_view bucket, std::string_view upload_id, uint32_t num) const;
  std::string WorkDir(size_t mp) const;
  std::string BmdPath(size_t mp) const;

 private:
  std::vector<std::string> paths_;
  std::vector<uint64_t> seeds_;  // per-mountpath hash seed for HRW
};

}  // namespace ais
