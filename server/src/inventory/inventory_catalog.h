// InventoryCatalog: create (as a job), show, destroy and page through bucket inventories (AIS
// "native bucket inventory"). Unlike upstream it works on local ais:// buckets: a listing from an
// inventory reads a few chunks of one object instead of walking every directory and object header.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "api/object_list.h"
#include "inventory/inventory_format.h"
#include "jobs/job_registry.h"
#include "store/store.h"

namespace ais {

// The next page of a remote bucket's entries after continuation `token` (flags: cached or not),
// and the token of the page after it ("" at the end).
using RemoteEntries = std::function<Result<std::pair<std::vector<ListEntry>, std::string>>(const std::string& token)>;

struct CreateInventoryOptions {
  std::string name;  // "" -> the job id
  uint64_t names_per_chunk = 0;
  bool force = false;
  std::string prefix;
  std::string props;
  uint64_t flags = 0;
  RemoteEntries remote;  // set for a remote bucket: its names come from the backend's listing
};

// One page read from an inventory; `entries` and `names` view into `chunks`, which keep them alive.
struct InventoryPage {
  std::vector<std::string_view> entries;  // LsoEnt msgpack maps
  std::vector<std::string_view> names;    // names[i] is entries[i]'s name
  std::string last_name;
  std::vector<std::shared_ptr<const InventoryChunk>> chunks;
};

class InventoryCatalog {
 public:
  InventoryCatalog(Store& store, JobRegistry& jobs) : store_(store), jobs_(jobs) {}

  // Validates (4xx on bad input or an existing inventory without force) and starts the job.
  Result<std::string> StartCreate(const std::string& bucket, CreateInventoryOptions opts);
  Result<std::vector<std::string>> Names(const std::string& bucket);
  // NBIInfo documents keyed by inventory object name; `name` "" = all of the bucket's.
  Result<nlohmann::json> Show(const std::string& bucket, const std::string& name);
  // Removes one (or, with "", every) inventory of the bucket; nothing to remove is success.
  Status Destroy(const std::string& bucket, const std::string& name);
  // Which inventory a listing uses: the named one, else the bucket's only one.
  Result<std::string> Resolve(const std::string& bucket, const std::string& requested);
  // Up to `limit` entries with names > after that start with prefix, in order.
  Result<InventoryPage> Page(const std::string& bucket, const std::string& inventory, const std::string& prefix,
                             const std::string& after, size_t limit);
  // The same, one level (LsNoRecursion, by ListNoRecursion's rules, as an ais:// bucket lists):
  // the entries directly under `prefix` and, unless `no_dirs`, one directory entry for each
  // virtual directory below it, which `after` may name.
  Result<InventoryPage> PageNoRecursion(const std::string& bucket, const std::string& inventory,
                                        const std::string& prefix, const std::string& after, size_t limit,
                                        bool no_dirs);

  static Status ValidateName(const std::string& name);

 private:
  struct Loaded {  // one opened inventory object at one version
    ObjectHandle handle;
    std::shared_ptr<const InventoryIndex> index;
    std::vector<uint64_t> part_offsets;  // byte offset of each part
  };
  Status EnsureSystemBucket();
  Status Build(JobControl& jc, const std::string& bucket, const std::string& objname,
               const CreateInventoryOptions& opts);
  Result<std::shared_ptr<Loaded>> Load(const std::string& objname);
  Result<std::shared_ptr<const InventoryChunk>> ReadChunk(const std::string& objname, Loaded& inv, size_t k);

  Store& store_;
  JobRegistry& jobs_;
  std::mutex mu_;
  std::map<std::string, std::string> building_;  // guarded by mu_: bucket -> job id of a running create
  // Decoded chunks, most recent first; keyed by object name, version and chunk number.
  static constexpr size_t kChunkCacheSize = 8;
  std::list<std::pair<std::string, std::shared_ptr<const InventoryChunk>>> chunk_cache_;  // guarded by mu_
};

}  // namespace ais
