// SortedWalker: one mountpath's objects of one bucket, in name order, resumable after any name.
// Directories are read one at a time and sorted, so memory is bounded by the widest directory, and
// subtrees that lie entirely before `after` or outside `prefix` are never opened.
//
// A paged listing resumes with a new walker per page. So that a page does not read and sort its
// directories again, each directory's sorted entries are kept (SortedDirCache) while the
// directory's mtime says it is unchanged; a page then costs a stat per directory and a binary
// search for where it resumes.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace ais {

class SortedWalker {
 public:
  // objects_dir: `<mp>/ais/<bucket>/%ob`. Yields names n with n.starts_with(prefix) && n > after.
  SortedWalker(std::string objects_dir, std::string prefix, std::string after);

  // Sets *name and *path to the next object; returns false when done.
  Result<bool> Next(std::string* name, std::string* path);

  struct Item {
    std::string key;   // decoded object name; directories end with '/'
    std::string disk;  // encoded name inside the frame's directory
    bool dir;
  };
  using Items = std::vector<Item>;  // sorted by key

 private:
  struct Frame {
    std::string rel;  // encoded directory relative to objects_dir_, "" or ending with '/'
    std::shared_ptr<const Items> items;
    size_t pos = 0;
  };
  Status Push(const std::string& rel, const std::string& key_prefix);
  // Whether `item` is to be yielded (a file) or entered (a directory).
  bool Wanted(const Item& item) const;

  const std::string objects_dir_;
  const std::string prefix_;
  const std::string after_;
  bool started_ = false;
  std::vector<Frame> stack_;
};

// Sorted directory entries by directory path, valid while the directory's inode and mtime are
// what they were when it was read. A directory modified within the last kSettleNs is not kept:
// its mtime might not change again on a modification within the same clock tick.
class SortedDirCache {
 public:
  static constexpr int64_t kSettleNs = 200'000'000;

  explicit SortedDirCache(size_t max_items) : max_items_(max_items) {}
  std::shared_ptr<const SortedWalker::Items> Get(const std::string& dir, uint64_t ino, int64_t mtime_ns);
  void Put(const std::string& dir, uint64_t ino, int64_t mtime_ns, std::shared_ptr<const SortedWalker::Items> items);

 private:
  struct Entry {
    std::string dir;
    uint64_t ino = 0;
    int64_t mtime_ns = 0;
    std::shared_ptr<const SortedWalker::Items> items;
  };
  const size_t max_items_;
  std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> by_dir_;  // guarded by mu_
  size_t items_ = 0;                                                   // guarded by mu_
};

// The process's cache (a million entries, ~100 MB at most).
SortedDirCache& SortedDirs();

}  // namespace ais
