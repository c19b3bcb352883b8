// SortedWalker: one mountpath's objects of one bucket, in name order, resumable after any name.
// Directories are read one at a time and sorted, so memory is bounded by the widest directory, and
// subtrees that lie entirely before `after` or outside `prefix` are never opened.
//
// A paged listing resumes with a new walker per page. So that a page does not read and sort its
// directories again, each directory's sorted entries are kept (SortedDirCache) while the
// directory's mtime says it is unchanged; a page then costs a stat per directory and a binary
// search for where it resumes. The objects' headers are kept with them once a walker read them
// (Meta()): a committed object file is never written in place - every change renames a new file
// over it or unlinks it (committer.h), which changes its directory's mtime - so a header is current
// as long as the entries it was kept with are. A header not kept yet is taken from the
// HeaderCache when it knows the entry's inode (header_cache.h), else read from its file.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/object_meta.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

class SortedWalker {
 public:
  // objects_dir: `<mp>/ais/<bucket>/%ob`. Yields names n with n.starts_with(prefix) && n > after.
  SortedWalker(std::string objects_dir, std::string prefix, std::string after);
  SortedWalker(SortedWalker&&) = default;
  SortedWalker(const SortedWalker&) = delete;
  SortedWalker& operator=(const SortedWalker&) = delete;

  // Moves to the next object; false when done. name(), path() and Meta() describe it until the
  // next call.
  Result<bool> Next();
  // Next(), and sets *name and *path to the object.
  Result<bool> Next(std::string* name, std::string* path);

  // The current object's name and file. REQUIRES: Next() returned true.
  const std::string& name() const { return stack_.back().dir->items[cur_].key; }
  std::string path() const;
  // The current object's header with an empty name, read once and kept with its directory's
  // entries: valid until the next Next() or the walker's end. kNotFound if the object went away
  // meanwhile. REQUIRES: Next() returned true.
  Result<const ObjectMeta*> Meta();

  struct Item {
    std::string key;   // decoded object name; directories end with '/'
    std::string disk;  // encoded name inside the frame's directory
    bool dir;
    uint64_t ino;      // the entry's inode number, as readdir said
  };
  // One directory's entries, sorted by key, and the headers of its objects that walkers have found
  // so far: metas[i] (of items[i], a file) is set at most once, by whichever walker finds it
  // first, which then stores the header's owner in owners[i] (shared with the HeaderCache).
  struct SortedDir {
    explicit SortedDir(std::vector<Item> sorted);
    SortedDir(const SortedDir&) = delete;
    SortedDir& operator=(const SortedDir&) = delete;

    // Keeps `meta` as items[i]'s header unless a walker got there first; the header kept.
    const ObjectMeta* Keep(size_t i, std::shared_ptr<const ObjectMeta> meta) const;

    const std::vector<Item> items;
    const std::unique_ptr<std::atomic<const ObjectMeta*>[]> metas;
    const std::unique_ptr<std::shared_ptr<const ObjectMeta>[]> owners;
  };

 private:
  struct Frame {
    std::string rel;  // encoded directory relative to objects_dir_, "" or ending with '/'
    std::string path;  // the directory: objects_dir_ + "/" + rel
    std::shared_ptr<const SortedDir> dir;
    size_t pos = 0;
    UniqueFd fd{};  // the directory, opened by the first Meta() that reads a header in it
  };
  Status Push(const std::string& rel, const std::string& key_prefix);
  // Opens the current frame's directory if it is not yet.
  Status OpenFrameDir(Frame& frame) const;
  // Keeps the headers of up to kReadAhead wanted files of `frame` from items[from] on that no
  // walker found yet: those the HeaderCache knows, then the others read from their files on two
  // threads (a listing of unknown headers is bound by an open, a read and a close per object) and
  // given to the HeaderCache. A header that fails to read is left to Meta() (which reports it).
  void ReadAhead(const Frame& frame, size_t from) const;
  static constexpr size_t kReadAhead = 512;
  // Whether `item` is to be yielded (a file) or entered (a directory).
  bool Wanted(const Item& item) const;

  const std::string objects_dir_;
  const std::string prefix_;
  const std::string after_;
  bool started_ = false;
  // The directories being walked, the current object's last: Next() returns as soon as it takes
  // an object, before anything is pushed or popped.
  std::vector<Frame> stack_;
  size_t cur_ = 0;  // the current object: stack_.back().dir->items[cur_]
};

// Sorted directory entries by directory path, valid while the directory's inode and mtime are
// what they were when it was read. A directory modified within the last kSettleNs is not kept:
// its mtime might not change again on a modification within the same clock tick.
class SortedDirCache {
 public:
  static constexpr int64_t kSettleNs = 200'000'000;

  explicit SortedDirCache(size_t max_items) : max_items_(max_items) {}
  std::shared_ptr<const SortedWalker::SortedDir> Get(const std::string& dir, uint64_t ino, int64_t mtime_ns);
  void Put(const std::string& dir, uint64_t ino, int64_t mtime_ns, std::shared_ptr<const SortedWalker::SortedDir> sorted);

 private:
  struct Entry {
    std::string dir;
    uint64_t ino = 0;
    int64_t mtime_ns = 0;
    std::shared_ptr<const SortedWalker::SortedDir> sorted;
  };
  const size_t max_items_;
  std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> by_dir_;  // guarded by mu_
  size_t items_ = 0;                                                   // guarded by mu_
};

// The process's cache: a million entries, ~100 MB at most; the headers kept with them are shared
// with the HeaderCache (header_cache.h), whose bound they may outlive by as much.
SortedDirCache& SortedDirs();

}  // namespace ais
