#include "store/sorted_walker.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "store/names.h"

namespace ais {

namespace {

int64_t RealtimeNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Every entry of directory `dir` that may be ours, sorted by key.
Result<std::shared_ptr<const SortedWalker::Items>> ReadSorted(const std::string& dir, const std::string& key_prefix) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return std::shared_ptr<const SortedWalker::Items>();
    return Status::FromErrno(errno, "opendir " + dir);
  }
  auto items = std::make_shared<SortedWalker::Items>();
  while (dirent* de = ::readdir(d)) {
    std::string disk = de->d_name;
    if (disk == "." || disk == "..") continue;
    bool is_dir = de->d_type == DT_DIR;
    if (de->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::stat((dir + disk).c_str(), &st) != 0) continue;
      is_dir = S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      if (disk.empty() || disk.back() != kDirSuffix) continue;  // not ours
      std::string key = key_prefix + disk.substr(0, disk.size() - 1) + "/";
      items->push_back({std::move(key), std::move(disk), true});
    } else {
      std::string key = key_prefix + disk;
      items->push_back({std::move(key), std::move(disk), false});
    }
  }
  ::closedir(d);
  std::sort(items->begin(), items->end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return std::shared_ptr<const SortedWalker::Items>(std::move(items));
}

}  // namespace

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
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const uint64_t ino = static_cast<uint64_t>(st.st_ino);
  std::shared_ptr<const Items> items = SortedDirs().Get(dir, ino, mtime_ns);
  if (!items) {
    auto read = ReadSorted(dir, key_prefix);
    if (!read.ok()) return read.status();
    if (!*read) return Status::OK();
    items = std::move(*read);
    if (RealtimeNs() - mtime_ns > SortedDirCache::kSettleNs) SortedDirs().Put(dir, ino, mtime_ns, items);
  }
  // Resume: the first key after `after_`, or the directory just before it that holds it.
  auto it = std::upper_bound(items->begin(), items->end(), after_,
                             [](const std::string& a, const Item& b) { return a < b.key; });
  if (it != items->begin() && std::prev(it)->dir && after_.starts_with(std::prev(it)->key)) --it;
  const auto pos = static_cast<size_t>(it - items->begin());
  stack_.push_back(Frame{.rel = rel, .items = std::move(items), .pos = pos});
  return Status::OK();
}

Result<bool> SortedWalker::Next(std::string* name, std::string* path) {
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
    if (top.pos == top.items->size()) {
      stack_.pop_back();
      continue;
    }
    const Item& item = (*top.items)[top.pos++];
    if (!Wanted(item)) {
      // Sorted: past the prefix's range nothing more of this directory can be wanted.
      if (item.key > prefix_ && !item.key.starts_with(prefix_) && !prefix_.starts_with(item.key)) top.pos = top.items->size();
      continue;
    }
    if (item.dir) {
      std::string rel = top.rel + item.disk + "/";
      std::string key = item.key;
      AIS_RETURN_IF_ERROR(Push(rel, key));  // may invalidate `top` and `item`
      continue;
    }
    *path = objects_dir_ + "/" + top.rel + item.disk;
    *name = item.key;
    return true;
  }
  return false;
}


std::shared_ptr<const SortedWalker::Items> SortedDirCache::Get(const std::string& dir, uint64_t ino, int64_t mtime_ns) {
  std::lock_guard lock(mu_);
  auto it = by_dir_.find(dir);
  if (it == by_dir_.end()) return nullptr;
  if (it->second->ino != ino || it->second->mtime_ns != mtime_ns) {  // changed since: drop it
    items_ -= it->second->items->size();
    lru_.erase(it->second);
    by_dir_.erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->items;
}

void SortedDirCache::Put(const std::string& dir, uint64_t ino, int64_t mtime_ns,
                         std::shared_ptr<const SortedWalker::Items> items) {
  const size_t n = items->size();
  if (n > max_items_) return;
  std::lock_guard lock(mu_);
  if (auto it = by_dir_.find(dir); it != by_dir_.end()) {
    items_ -= it->second->items->size();
    lru_.erase(it->second);
    by_dir_.erase(it);
  }
  lru_.push_front(Entry{.dir = dir, .ino = ino, .mtime_ns = mtime_ns, .items = std::move(items)});
  by_dir_[dir] = lru_.begin();
  items_ += n;
  while (items_ > max_items_) {
    items_ -= lru_.back().items->size();
    by_dir_.erase(lru_.back().dir);
    lru_.pop_back();
  }
}

SortedDirCache& SortedDirs() {
  static SortedDirCache cache(1 << 20);
  return cache;
}

}  // namespace ais
