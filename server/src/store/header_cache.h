// HeaderCache: the headers of object files the store wrote or a listing read, so that a listing
// need not open an object file whose header is known - the first listing after a bulk write opens
// none, and a listing of a directory that keeps changing reads only what is new in it.
//
// An entry is keyed by the object file's directory and name and holds the file's inode number. A
// committed object file is never written in place: every change renames a new file (a new inode)
// over it or unlinks it (committer.h). So a header is the current one exactly when the directory entry
// still names the inode it was kept with - which readdir says (d_ino) without a system call per
// file. The store forgets an entry when it unlinks or moves the file, so that a later file given
// the freed inode number is never taken for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/object_meta.h"
#include "util/status.h"

namespace ais {

class HeaderCache {
 public:
  explicit HeaderCache(size_t max_items) : max_items_(max_items) {}

  struct Entry {
    std::string_view file;
    uint64_t ino;
    std::shared_ptr<const ObjectMeta> meta;  // its name empty: the file names it
  };
  // Keeps a batch of headers of files in `dir` (with a trailing '/') under one lock.
  void Put(std::string_view dir, std::span<Entry> entries);
  // Keeps the header of the file at `path`.
  void PutPath(std::string_view path, uint64_t ino, std::shared_ptr<const ObjectMeta> meta);
  void ForgetPath(std::string_view path);
  // Forgets every directory whose path starts with `prefix` (a destroyed bucket's).
  void ForgetUnder(std::string_view prefix);

  struct Want {
    std::string_view file;
    uint64_t ino;
    std::shared_ptr<const ObjectMeta>* out;  // set when (dir, file) is kept with inode `ino`
  };
  // Looks up a batch of files of one directory under one lock.
  void Find(const std::string& dir, std::span<const Want> wants);

  size_t size() const;
  // Counts the Puts and Forgets so far: a snapshot saved at one count is current while it holds.
  uint64_t changes() const { return changes_.load(std::memory_order_relaxed); }

  // A snapshot, so that the first listing after a restart opens no file whose header the server
  // knew when it stopped. Save writes the headers kept for the directories under `root` (a
  // mountpath) to `file` (atomically), each directory with its inode and mtime. Load reads the
  // file and removes it - the store does not keep it current, so it is good for one start - then
  // keeps the headers of every directory that is still the same: same inode, same mtime (nothing
  // renamed into, over or out of it while the server was down), and no Put or Forget for it since
  // Load began (the running store's own changes); it returns how many headers it kept. A file
  // that is damaged or not a snapshot is removed unused (kCorruption).
  // `settle_ns`: see kSettleNs; a save while the store runs leaves out more (kRunningSettleNs).
  // `unsettled` (optional) counts the directories left out for having changed within it.
  Status Save(const std::string& root, const std::string& file, int64_t settle_ns = kSettleNs,
              size_t* unsettled = nullptr) const;
  Result<size_t> Load(const std::string& file);
  // Save leaves out a directory modified within this long: a change in the same clock tick as
  // its stat might leave its mtime as it was.
  static constexpr int64_t kSettleNs = 20'000'000;
  // While the store runs, a header may be put a while after its file's rename (a thread held up):
  // a directory modified within this long is left out of a periodic save. The inode check at
  // each lookup still catches a header older than its file; this keeps such entries rare.
  static constexpr int64_t kRunningSettleNs = 2'000'000'000;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Known {
    uint64_t ino = 0;
    std::shared_ptr<const ObjectMeta> meta;
  };
  using Files = std::unordered_map<std::string, Known, StringHash, std::equal_to<>>;
  struct Dir {
    Files files;
    std::list<std::string>::iterator lru;  // its place in lru_
  };
  using Dirs = std::unordered_map<std::string, Dir, StringHash, std::equal_to<>>;
  // Moves `it` to the front of lru_. REQUIRES: mu_ held.
  void Touch(Dirs::iterator it);
  // Drops least recently used directories until within max_items_. REQUIRES: mu_ held.
  void Trim();
  // While a Load runs, notes that `dir` changed. REQUIRES: mu_ held.
  void Touched(std::string_view dir);

  const size_t max_items_;
  mutable std::mutex mu_;
  Dirs dirs_;                   // guarded by mu_
  std::list<std::string> lru_;  // directory paths, most recently used first; guarded by mu_
  size_t items_ = 0;            // guarded by mu_
  std::atomic<uint64_t> changes_{0};
  // While a Load runs (loading_ > 0): the directories put or forgotten meanwhile, and the
  // prefixes forgotten whole; the Load leaves those as they are. Guarded by mu_.
  int loading_ = 0;
  std::unordered_set<std::string, StringHash, std::equal_to<>> touched_;
  std::vector<std::string> touched_under_;
};

// The process's cache: a million headers (~300 MB at most: an ObjectMeta, its strings and a node),
// shared with the SortedDirCache's entries that hold them.
HeaderCache& Headers();

}  // namespace ais
