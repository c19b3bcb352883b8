#include "store/header_cache.h"

namespace ais {

namespace {

// "dir/" and "file" of a path; the directory keeps its trailing '/'.
std::pair<std::string_view, std::string_view> SplitPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

}  // namespace

void HeaderCache::Touch(Dirs::iterator it) {
  lru_.splice(lru_.begin(), lru_, it->second.lru);
}

void HeaderCache::Trim() {
  while (items_ > max_items_ && !lru_.empty()) {
    auto it = dirs_.find(lru_.back());
    items_ -= it->second.files.size();
    dirs_.erase(it);
    lru_.pop_back();
  }
}

void HeaderCache::Put(std::string_view dir, std::span<Entry> entries) {
  if (entries.empty()) return;
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) {
    lru_.emplace_front(dir);
    it = dirs_.emplace(lru_.front(), Dir{.files = {}, .lru = lru_.begin()}).first;
  } else {
    Touch(it);
  }
  for (Entry& e : entries) {
    auto [at, added] = it->second.files.try_emplace(std::string(e.file));
    at->second = Known{.ino = e.ino, .meta = std::move(e.meta)};
    items_ += added ? 1 : 0;
  }
  Trim();  // may drop `dir` itself: then it was too large to keep
}

void HeaderCache::PutPath(std::string_view path, uint64_t ino, std::shared_ptr<const ObjectMeta> meta) {
  auto [dir, file] = SplitPath(path);
  Entry e{.file = file, .ino = ino, .meta = std::move(meta)};
  Put(dir, std::span<Entry>(&e, 1));
}

void HeaderCache::ForgetPath(std::string_view path) {
  auto [dir, file] = SplitPath(path);
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  auto f = it->second.files.find(file);
  if (f == it->second.files.end()) return;
  it->second.files.erase(f);
  --items_;
  if (it->second.files.empty()) {
    lru_.erase(it->second.lru);
    dirs_.erase(it);
  }
}

void HeaderCache::ForgetUnder(std::string_view prefix) {
  std::lock_guard lock(mu_);
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (!it->first.starts_with(prefix)) {
      ++it;
      continue;
    }
    items_ -= it->second.files.size();
    lru_.erase(it->second.lru);
    it = dirs_.erase(it);
  }
}

void HeaderCache::Find(const std::string& dir, std::span<const Want> wants) {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  Touch(it);
  for (const Want& w : wants) {
    auto f = it->second.files.find(w.file);
    if (f != it->second.files.end() && f->second.ino == w.ino) *w.out = f->second.meta;
  }
}

size_t HeaderCache::size() const {
  std::lock_guard lock(mu_);
  return items_;
}

HeaderCache& Headers() {
  static HeaderCache cache(1 << 20);
  return cache;
}

}  // namespace ais
