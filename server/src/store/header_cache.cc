#include "store/header_cache.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/clock.h"
#include "util/file.h"

namespace ais {

namespace {

// The snapshot file (Save, Load), in this machine's byte order (it never leaves the machine):
//   "AISHDRS1"
//   per directory: u32 length + path, u64 inode, i64 mtime (ns), u32 count,
//                  count x (u32 length + file name, u64 inode, u32 length + EncodeObjectMeta)
//   u64 XXH64 of everything before it
constexpr char kSnapshotMagic[8] = {'A', 'I', 'S', 'H', 'D', 'R', 'S', '1'};

template <typename T>
void Append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void AppendString(std::string& out, std::string_view s) {
  Append(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads what Append wrote; every read is bounds-checked (ok() false once one ran past the end).
class SnapshotReader {
 public:
  explicit SnapshotReader(std::string_view in) : in_(in) {}
  template <typename T>
  T Get() {
    T v{};
    if (in_.size() - at_ < sizeof(T)) {
      at_ = in_.size();
      ok_ = false;
      return v;
    }
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string_view GetString() {
    const auto n = Get<uint32_t>();
    if (in_.size() - at_ < n) {
      at_ = in_.size();
      ok_ = false;
      return {};
    }
    std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == in_.size(); }
  bool ok() const { return ok_; }

 private:
  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
};

// The directory's inode and mtime, or false when it cannot be stat'ed.
bool DirIdentity(const std::string& dir, uint64_t* ino, int64_t* mtime_ns) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *ino = static_cast<uint64_t>(st.st_ino);
  *mtime_ns = MtimeNs(st);
  return true;
}

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

void HeaderCache::Touched(std::string_view dir) {
  if (loading_ > 0) touched_.emplace(dir);
}

void HeaderCache::Put(std::string_view dir, std::span<Entry> entries) {
  if (entries.empty()) return;
  std::lock_guard lock(mu_);
  changes_.fetch_add(1, std::memory_order_relaxed);
  Touched(dir);
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
  Touched(dir);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  auto f = it->second.files.find(file);
  if (f == it->second.files.end()) return;
  changes_.fetch_add(1, std::memory_order_relaxed);
  it->second.files.erase(f);
  --items_;
  if (it->second.files.empty()) {
    lru_.erase(it->second.lru);
    dirs_.erase(it);
  }
}

void HeaderCache::ForgetUnder(std::string_view prefix) {
  std::lock_guard lock(mu_);
  changes_.fetch_add(1, std::memory_order_relaxed);
  if (loading_ > 0) touched_under_.emplace_back(prefix);
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

Status HeaderCache::Save(const std::string& root, const std::string& file, int64_t settle_ns,
                         size_t* unsettled) const {
  std::string out(kSnapshotMagic, sizeof(kSnapshotMagic));
  const int64_t settled = NowNs() - settle_ns;
  {
    std::lock_guard lock(mu_);
    out.reserve(items_ * 128);  // a header of a plain object: ~60 bytes, its name and inode ~30
    for (const auto& [dir, d] : dirs_) {
      uint64_t ino = 0;
      int64_t mtime_ns = 0;
      if (!dir.starts_with(root) || !DirIdentity(dir, &ino, &mtime_ns)) continue;
      if (mtime_ns > settled) {
        if (unsettled != nullptr) ++*unsettled;
        continue;
      }
      AppendString(out, dir);
      Append(out, ino);
      Append(out, mtime_ns);
      Append(out, static_cast<uint32_t>(d.files.size()));
      for (const auto& [name, known] : d.files) {
        AppendString(out, name);
        Append(out, known.ino);
        AppendString(out, EncodeObjectMeta(*known.meta));
      }
    }
  }
  Append(out, static_cast<uint64_t>(XXH64(out.data(), out.size(), 0)));
  return AtomicWriteFile(file, out, /*sync=*/false);
}

Result<size_t> HeaderCache::Load(const std::string& file) {
  auto content = ReadFile(file);
  if (!content.ok()) {
    if (content.status().IsNotFound()) return size_t{0};
    return content.status();
  }
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove " + file);
  std::string_view in = *content;
  uint64_t sum = 0;
  if (in.size() < sizeof(kSnapshotMagic) + sizeof(sum) ||
      std::memcmp(in.data(), kSnapshotMagic, sizeof(kSnapshotMagic)) != 0) {
    return Status::Corruption(file + ": not a header snapshot");
  }
  std::memcpy(&sum, in.data() + in.size() - sizeof(sum), sizeof(sum));
  in.remove_suffix(sizeof(sum));
  if (XXH64(in.data(), in.size(), 0) != sum) return Status::Corruption(file + ": checksum mismatch");
  in.remove_prefix(sizeof(kSnapshotMagic));
  {
    std::lock_guard lock(mu_);
    ++loading_;
  }
  Status status;
  size_t kept = 0;
  SnapshotReader r(in);
  while (r.ok() && !r.done()) {
    const std::string dir(r.GetString());
    const auto saved_ino = r.Get<uint64_t>();
    const auto saved_mtime = r.Get<int64_t>();
    const auto count = r.Get<uint32_t>();
    uint64_t ino = 0;
    int64_t mtime_ns = 0;
    const bool same = DirIdentity(dir, &ino, &mtime_ns) && ino == saved_ino && mtime_ns == saved_mtime;
    std::vector<std::pair<std::string_view, Known>> files;
    if (same) files.reserve(count);
    for (uint32_t i = 0; i < count && r.ok(); ++i) {
      const std::string_view name = r.GetString();
      const auto file_ino = r.Get<uint64_t>();
      const std::string_view packed = r.GetString();
      if (!same || !r.ok()) continue;
      auto meta = DecodeObjectMeta(packed);
      if (!meta.ok()) {
        status = meta.status();
        continue;
      }
      files.emplace_back(name, Known{.ino = file_ino, .meta = std::make_shared<const ObjectMeta>(std::move(*meta))});
    }
    if (files.empty() || !r.ok()) continue;
    std::lock_guard lock(mu_);
    const bool changed = touched_.contains(dir) ||
                         std::any_of(touched_under_.begin(), touched_under_.end(),
                                     [&dir](const std::string& prefix) { return dir.starts_with(prefix); });
    if (changed || dirs_.contains(dir)) continue;
    lru_.emplace_front(dir);
    auto it = dirs_.emplace(lru_.front(), Dir{.files = {}, .lru = lru_.begin()}).first;
    it->second.files.reserve(files.size());
    for (auto& [name, known] : files) {
      if (!it->second.files.try_emplace(std::string(name), std::move(known)).second) continue;
      ++items_;
      ++kept;
    }
    Trim();
  }
  if (!r.ok()) status = Status::Corruption(file + ": truncated");
  {
    std::lock_guard lock(mu_);
    if (--loading_ == 0) {
      touched_.clear();
      touched_under_.clear();
    }
  }
  if (!status.ok()) return status;
  return kept;
}

HeaderCache& Headers() {
  // Never destroyed: freeing a million headers one by one made a stopping server wait.
  static HeaderCache* const cache = new HeaderCache(1 << 20);
  return *cache;
}

}  // namespace ais
