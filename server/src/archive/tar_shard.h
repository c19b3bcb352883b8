// TarShard: an uncompressed tar shard. Headers are scanned once, lazily and only as far as a
// lookup needs; members are read in place, so GetBatch can send them by sendfile.
#pragma once

#include <mutex>
#include <unordered_map>
#include <vector>

#include "archive/shard.h"
#include "archive/tar_scanner.h"

namespace ais {

class TarShard : public Shard {
 public:
  explicit TarShard(std::shared_ptr<const ObjectHandle> obj);

  Result<Member> Find(std::string_view path) override;
  Status Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) override;
  Status ForEach(const std::function<Status(const Member&)>& fn) override;

 private:
  // REQUIRES: mu_ held. Scans one more entry; false at the end.
  Result<bool> ScanOne();

  std::mutex mu_;
  TarScanner scanner_;                                // guarded by mu_
  std::vector<Member> members_;                       // guarded by mu_: regular files seen so far
  std::unordered_map<std::string, size_t> by_key_;    // guarded by mu_: Key(name) -> first index
  bool complete_ = false;                             // guarded by mu_
};

}  // namespace ais
