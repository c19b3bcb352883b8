#include "store/sorted_walker.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <system_error>
#include <thread>

#include "store/header_cache.h"
#include "store/names.h"
#include "util/clock.h"
#include "util/file.h"

namespace ais {

namespace {

// Every entry of directory `dir` that may be ours, sorted by key.
Result<std::shared_ptr<const SortedWalker::SortedDir>> ReadSorted(const std::string& dir,
                                                                  const std::string& key_prefix) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return std::shared_ptr<const SortedWalker::SortedDir>();
    return Status::FromErrno(errno, "opendir " + dir);
  }
  std::vector<SortedWalker::Item> items;
  while (dirent* de = ::readdir(d)) {
    std::string disk = de->d_name;
    if (disk == "." || disk == "..") continue;
    bool is_dir = de->d_type == DT_DIR;
    if (de->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::stat((dir + disk).c_str(), &st) != 0) continue;
      is_dir = S_ISDIR(st.st_mode);
    }
    const auto ino = static_cast<uint64_t>(de->d_ino);
    if (is_dir) {
      if (disk.empty() || disk.back() != kDirSuffix) continue;  // not ours
      std::string key = key_prefix + disk.substr(0, disk.size() - 1) + "/";
      items.push_back({std::move(key), std::move(disk), true, ino});
    } else {
      std::string key = key_prefix + disk;
      items.push_back({std::move(key), std::move(disk), false, ino});
    }
  }
  ::closedir(d);
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return std::shared_ptr<const SortedWalker::SortedDir>(std::make_shared<SortedWalker::SortedDir>(std::move(items)));
}

}  // namespace

SortedWalker::SortedDir::SortedDir(std::vector<Item> sorted)
    : items(std::move(sorted)),
      metas(new std::atomic<const ObjectMeta*>[items.size()]),
      owners(new std::shared_ptr<const ObjectMeta>[items.size()]) {
  for (size_t i = 0; i < items.size(); ++i) metas[i].store(nullptr, std::memory_order_relaxed);
}

const ObjectMeta* SortedWalker::SortedDir::Keep(size_t i, std::shared_ptr<const ObjectMeta> meta) const {
  const ObjectMeta* expected = nullptr;
  // Only the winner writes owners[i]; the header stays alive through `meta` until it has. Readers
  // use metas[i] while they hold the SortedDir, which owners[] outlives.
  if (!metas[i].compare_exchange_strong(expected, meta.get(), std::memory_order_acq_rel)) return expected;
  owners[i] = std::move(meta);
  return owners[i].get();
}

SortedWalker::SortedWalker(std::string objects_dir, std::string prefix, std::string after)
    : objects_dir_(std::move(objects_dir)), prefix_(std::move(prefix)), after_(std::move(after)) {}

bool SortedWalker::Wanted(const Item& item) const {
  if (item.dir) {
    const bool in_prefix = item.key.starts_with(prefix_) || prefix_.starts_with(item.key);
    const bool before = item.key < after_ && !after_.starts_with(item.key);
    return in_prefix && !before;
  }
  return item.key.starts_with(prefix_) && item.key > after_;
}

Status SortedWalker::Push(const std::string& rel, const std::string& key_prefix) {
  const std::string dir = objects_dir_ + "/" + rel;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();  // vanished or never existed
    return Status::FromErrno(errno, "stat " + dir);
  }
  const int64_t mtime_ns = MtimeNs(st);
  const uint64_t ino = static_cast<uint64_t>(st.st_ino);
  std::shared_ptr<const SortedDir> sorted = SortedDirs().Get(dir, ino, mtime_ns);
  if (!sorted) {
    auto read = ReadSorted(dir, key_prefix);
    if (!read.ok()) return read.status();
    if (!*read) return Status::OK();
    sorted = std::move(*read);
    if (NowNs() - mtime_ns > SortedDirCache::kSettleNs) SortedDirs().Put(dir, ino, mtime_ns, sorted);
  }
  // Resume: the first key after `after_`, or the directory just before it that holds it.
  const std::vector<Item>& items = sorted->items;
  auto it = std::upper_bound(items.begin(), items.end(), after_,
                             [](const std::string& a, const Item& b) { return a < b.key; });
  if (it != items.begin() && std::prev(it)->dir && after_.starts_with(std::prev(it)->key)) --it;
  const auto pos = static_cast<size_t>(it - items.begin());
  stack_.push_back(Frame{.rel = rel, .path = dir, .dir = std::move(sorted), .pos = pos});
  return Status::OK();
}

Result<bool> SortedWalker::Next(std::string* name, std::string* path) {
  auto more = Next();
  if (more.ok() && *more) {
    *name = this->name();
    *path = this->path();
  }
  return more;
}

std::string SortedWalker::path() const {
  const Frame& frame = stack_.back();
  return frame.path + frame.dir->items[cur_].disk;
}

namespace {

struct ReadHeader {
  std::shared_ptr<const ObjectMeta> meta;  // its name cleared
  uint64_t ino = 0;                        // of the file it was read from
};

// The header of file `disk` in the directory open as `dir_fd`; errors name the file as `shown`.
Result<ReadHeader> ReadHeaderAt(int dir_fd, const std::string& disk, const std::string& shown) {
  UniqueFd file(::openat(dir_fd, disk.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.valid()) return Status::FromErrno(errno, "open " + shown);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return Status::FromErrno(errno, "stat " + shown);
  uint64_t offset = 0;
  auto read = ReadObjectHeader(file.get(), &offset);
  if (!read.ok()) return read.status();
  auto meta = std::make_shared<ObjectMeta>(std::move(*read));
  meta->name.clear();
  return ReadHeader{.meta = std::move(meta), .ino = static_cast<uint64_t>(st.st_ino)};
}

}  // namespace

Status SortedWalker::OpenFrameDir(Frame& frame) const {
  if (frame.fd.valid()) return Status::OK();
  // Headers are opened relative to the directory: a path walk of one name, not of the whole path.
  const int fd = ::open(frame.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + frame.path);
  frame.fd.reset(fd);
  return Status::OK();
}

void SortedWalker::ReadAhead(const Frame& frame, size_t from) const {
  const SortedDir& sorted = *frame.dir;
  std::vector<size_t> todo;
  for (size_t i = from; i < sorted.items.size() && todo.size() < kReadAhead; ++i) {
    const Item& item = sorted.items[i];
    if (item.dir || !Wanted(item) || sorted.metas[i].load(std::memory_order_acquire) != nullptr) continue;
    todo.push_back(i);
  }
  std::vector<std::shared_ptr<const ObjectMeta>> known(todo.size());
  std::vector<HeaderCache::Want> wants;
  wants.reserve(todo.size());
  for (size_t k = 0; k < todo.size(); ++k) {
    wants.push_back({.file = sorted.items[todo[k]].disk, .ino = sorted.items[todo[k]].ino, .out = &known[k]});
  }
  Headers().Find(frame.path, wants);
  std::vector<size_t> unknown;
  for (size_t k = 0; k < todo.size(); ++k) {
    if (known[k]) {
      sorted.Keep(todo[k], std::move(known[k]));
    } else {
      unknown.push_back(todo[k]);
    }
  }
  std::vector<ReadHeader> read(unknown.size());
  auto read_range = [&sorted, &unknown, &read, fd = frame.fd.get()](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const std::string& disk = sorted.items[unknown[k]].disk;
      auto got = ReadHeaderAt(fd, disk, disk);
      if (!got.ok()) continue;
      read[k] = std::move(*got);
      sorted.Keep(unknown[k], read[k].meta);
    }
  };
  const size_t half = unknown.size() / 2;
  std::optional<std::thread> helper;
  if (half >= 16) {  // a thread costs tens of microseconds: only for a batch worth it
    try {
      helper.emplace(read_range, half, unknown.size());
    } catch (const std::system_error&) {  // no thread to be had: all on this one
    }
  }
  read_range(0, helper ? half : unknown.size());
  if (helper) helper->join();
  std::vector<HeaderCache::Entry> entries;
  entries.reserve(unknown.size());
  for (size_t k = 0; k < unknown.size(); ++k) {
    if (read[k].meta) entries.push_back({.file = sorted.items[unknown[k]].disk, .ino = read[k].ino, .meta = std::move(read[k].meta)});
  }
  Headers().Put(frame.path, entries);
}

Result<const ObjectMeta*> SortedWalker::Meta() {
  Frame& frame = stack_.back();
  if (const ObjectMeta* kept = frame.dir->metas[cur_].load(std::memory_order_acquire)) return kept;
  AIS_RETURN_IF_ERROR(OpenFrameDir(frame));
  ReadAhead(frame, cur_);
  if (const ObjectMeta* kept = frame.dir->metas[cur_].load(std::memory_order_acquire)) return kept;
  auto got = ReadHeaderAt(frame.fd.get(), frame.dir->items[cur_].disk, path());  // again, for its error
  if (!got.ok()) return got.status();
  return frame.dir->Keep(cur_, std::move(got->meta));
}

Result<bool> SortedWalker::Next() {
  if (!started_) {
    started_ = true;
    std::string rel = PrefixRelDir(prefix_);
    if (!rel.empty()) rel.push_back('/');
    auto slash = prefix_.rfind('/');
    std::string key_prefix = slash == std::string::npos ? "" : prefix_.substr(0, slash + 1);
    AIS_RETURN_IF_ERROR(Push(rel, key_prefix));
  }
  while (!stack_.empty()) {
    Frame& top = stack_.back();
    const std::vector<Item>& items = top.dir->items;
    if (top.pos == items.size()) {
      stack_.pop_back();
      continue;
    }
    const size_t at = top.pos++;
    const Item& item = items[at];
    if (!Wanted(item)) {
      // Sorted: past the prefix's range nothing more of this directory can be wanted.
      if (item.key > prefix_ && !item.key.starts_with(prefix_) && !prefix_.starts_with(item.key)) top.pos = items.size();
      continue;
    }
    if (item.dir) {
      std::string rel = top.rel + item.disk + "/";
      std::string key = item.key;
      AIS_RETURN_IF_ERROR(Push(rel, key));  // may invalidate `top` and `item`
      continue;
    }
    cur_ = at;
    return true;
  }
  return false;
}


std::shared_ptr<const SortedWalker::SortedDir> SortedDirCache::Get(const std::string& dir, uint64_t ino, int64_t mtime_ns) {
  std::lock_guard lock(mu_);
  auto it = by_dir_.find(dir);
  if (it == by_dir_.end()) return nullptr;
  if (it->second->ino != ino || it->second->mtime_ns != mtime_ns) {  // changed since: drop it
    items_ -= it->second->sorted->items.size();
    lru_.erase(it->second);
    by_dir_.erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->sorted;
}

void SortedDirCache::Put(const std::string& dir, uint64_t ino, int64_t mtime_ns,
                         std::shared_ptr<const SortedWalker::SortedDir> sorted) {
  const size_t n = sorted->items.size();
  if (n > max_items_) return;
  std::lock_guard lock(mu_);
  if (auto it = by_dir_.find(dir); it != by_dir_.end()) {
    items_ -= it->second->sorted->items.size();
    lru_.erase(it->second);
    by_dir_.erase(it);
  }
  lru_.push_front(Entry{.dir = dir, .ino = ino, .mtime_ns = mtime_ns, .sorted = std::move(sorted)});
  by_dir_[dir] = lru_.begin();
  items_ += n;
  while (items_ > max_items_) {
    items_ -= lru_.back().sorted->items.size();
    by_dir_.erase(lru_.back().dir);
    lru_.pop_back();
  }
}

SortedDirCache& SortedDirs() {
  static SortedDirCache* const cache = new SortedDirCache(1 << 20);  // never destroyed, as Headers()
  return *cache;
}

}  // namespace ais
