// SortedWalker: one mountpath's objects of one bucket, in name order, resumable after any name.
// Directories are read one at a time and sorted, so memory is bounded by the widest directory, and
// subtrees that lie entirely before `after` or outside `prefix` are never opened.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace ais {

class SortedWalker {
 public:
  // objects_dir: `<mp>/ais/<bucket>/%ob`. Yields names n with n.starts_with(prefix) && n > after.
  SortedWalker(std::string objects_dir, std::string prefix, std::string after);

  // Sets *name and *path to the next object; returns false when done.
  Result<bool> Next(std::string* name, std::string* path);

 private:
  struct Item {
    std::string key;   // decoded object name; directories end with '/'
    std::string disk;  // encoded name inside the frame's directory
    bool dir;
  };
  struct Frame {
    std::string rel;  // encoded directory relative to objects_dir_, "" or ending with '/'
    std::vector<Item> items;
    size_t pos = 0;
  };
  Status Push(const std::string& rel, const std::string& key_prefix);

  const std::string objects_dir_;
  const std::string prefix_;
  const std::string after_;
  bool started_ = false;
  std::vector<Frame> stack_;
};

}  // namespace ais
