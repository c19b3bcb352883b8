// BucketRegistry: the bucket metadata (BMD). One JSON document, versioned, written atomically to
// every mountpath; at startup the highest version found wins.
#pragma once

#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "store/bck.h"
#include "store/bucket_props.h"
#include "store/mountpaths.h"
#include "util/status.h"

namespace ais {

class BucketRegistry {
 public:
  BucketRegistry(const Mountpaths& mps, bool sync) : mps_(mps), sync_(sync) {}

  Status Load();
  // Creates the bucket with default props patched by `props` (null: defaults).
  Status Create(const std::string& name, const nlohmann::json& props);
  Status Remove(const std::string& name);
  // Writes the BMD again (a new version) to every enabled mountpath: one just enabled.
  Status Persist();
  std::optional<BucketProps> Get(const std::string& name) const;
  // The bucket's `access` bits alone (asked on every request: no copy of the props).
  std::optional<uint64_t> Access(const std::string& name) const;
  Status Update(const std::string& name, const nlohmann::json& patch);
  std::vector<std::string> Names() const;

  static Status NotFound(const std::string& name) {
    return Status::BucketNotFound("bucket \"" + BucketCname(name) + "\" does not exist");
  }

 private:
  Status PersistLocked();  // REQUIRES: mu_ held exclusively

  const Mountpaths& mps_;
  const bool sync_;
  mutable std::shared_mutex mu_;
  uint64_t version_ = 0;                        // guarded by mu_
  std::map<std::string, BucketProps> buckets_;  // guarded by mu_
};

}  // namespace ais
