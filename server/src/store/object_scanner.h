// ObjectScanner: every object of a bucket in name order, merged across mountpaths, with metadata.
// One pass, bounded memory (one SortedWalker per mountpath); the building block of listings.
#pragma once

#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "store/mountpaths.h"
#include "store/object_meta.h"
#include "store/sorted_walker.h"
#include "util/status.h"

namespace ais {

class ObjectScanner {
 public:
  // Yields objects n with n.starts_with(prefix) && n > after.
  ObjectScanner(const Mountpaths& mps, const std::string& bucket, std::string prefix, std::string after);

  // Sets *meta to the next object; false at the end. Objects deleted mid-scan are skipped.
  Result<bool> Next(ObjectMeta* meta);

 private:
  struct Head {
    std::string name;
    std::string path;
    size_t walker;
    bool operator>(const Head& o) const { return name > o.name; }
  };
  Status Advance(size_t walker);

  std::vector<SortedWalker> walkers_;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heap_;
  bool started_ = false;
};

}  // namespace ais
