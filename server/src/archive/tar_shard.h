// TarShard: an uncompressed tar shard. Members are read in place, so GetBatch can send them by
// sendfile. Its headers are walked once per object version, not once per request: the index is
// kept across requests in SharedTarIndexes() (archive/tar_index.h).
#pragma once

#include <memory>
#include <mutex>

#include "archive/shard.h"
#include "archive/tar_index.h"
#include "archive/tar_scanner.h"

namespace ais {

class TarShard : public Shard {
 public:
  explicit TarShard(std::shared_ptr<const ObjectHandle> obj);

  Result<Member> Find(std::string_view path) override;
  Status Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) override;
  Status ForEach(const std::function<Status(const Member&)>& fn) override;

  // A shard of more members is not indexed whole: the first kMaxIndexedMembers are kept, and a
  // lookup past them (or ForEach) walks the rest again, keeping nothing, so that the memory a
  // shard takes is bounded whatever it holds.
  static constexpr size_t kMaxIndexedMembers = 1 << 16;

 private:
  // A scanner of the object from its first entry.
  TarScanner NewScanner() const;
  // REQUIRES: mu_ held. Scans one more entry into partial_; false at the end.
  Result<bool> ScanOne();
  // REQUIRES: mu_ held, complete_. Makes partial_ the index, and shares it.
  void Publish();

  const std::string cache_key_;  // bucket and object name
  const TarIndexCache::Identity identity_;
  std::mutex mu_;
  std::shared_ptr<const TarIndex> index_;  // guarded by mu_: every member, once known
  TarScanner scanner_;                     // guarded by mu_
  TarIndex partial_;                       // guarded by mu_: the members scanned so far
  bool complete_ = false;                  // guarded by mu_
};

}  // namespace ais
