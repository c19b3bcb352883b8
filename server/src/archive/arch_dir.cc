#include "archive/arch_dir.h"

#include <algorithm>
#include <map>

#include "archive/archive_format.h"
#include "store/store.h"
#include "archive/shard.h"

namespace ais {
namespace {

struct Member {
  std::string name;
  uint64_t size;
};

// The files of archive `name`, sorted; empty when it cannot be read as an archive.
std::vector<Member> Members(Store& store, const std::string& bucket, const std::string& name) {
  std::vector<Member> out;
  auto obj = store.OpenShared(bucket, name);
  if (!obj.ok()) return out;
  auto shard = Shard::Open(*obj, name, FormatFromName(name));
  if (!shard.ok()) return out;
  Status st = (*shard)->ForEach([&](const Shard::Member& m) {
    out.push_back(Member{m.name, m.size});
    return Status::OK();
  });
  if (!st.ok()) return {};
  std::stable_sort(out.begin(), out.end(), [](const Member& a, const Member& b) { return a.name < b.name; });
  return out;
}

// Archives named by a prefix of `marker` whose files may sort after it: `marker` is the archive
// itself, one of its files, or a name that sorts before the archive's files ("a.tar-1" before
// "a.tar/x"). With `into_only`, only archives the marker reaches into ("a.tar/dir/").
std::vector<std::string> ArchivesAround(Store& store, const std::string& bucket, const std::string& marker,
                                        bool into_only) {
  std::vector<std::string> out;
  for (size_t len = 1; len <= marker.size(); ++len) {
    std::string candidate = marker.substr(0, len);
    if (!FormatFromName(candidate)) continue;
    bool behind = len == marker.size() || marker[len] <= '/';
    if (into_only ? (len < marker.size() && marker[len] == '/') : behind) {
      if (store.Head(bucket, candidate).ok()) out.push_back(std::move(candidate));
    }
  }
  return out;
}

// Merges the store's sorted objects with the sorted files of the archives among them.
class Lister {
 public:
  Lister(Store& store, const std::string& bucket, const ListQuery& q) : store_(store), bucket_(bucket), q_(q) {}

  Status Run() {
    std::vector<std::string> archives = ArchivesAround(store_, bucket_, q_.after, false);
    for (auto& a : ArchivesAround(store_, bucket_, q_.prefix, true)) {
      if (std::find(archives.begin(), archives.end(), a) == archives.end()) archives.push_back(std::move(a));
    }
    for (const auto& a : archives) {
      auto meta = store_.Head(bucket_, a);
      if (meta.ok()) Pend(*meta);
    }
    ListQuery q = q_;
    while (!full()) {
      auto page = store_.List(bucket_, q);
      if (!page.ok()) return page.status();
      for (auto& m : *page) {
        Flush(&m.name);
        if (full()) break;
        bool archive = FormatFromName(m.name).has_value();
        if (archive) Pend(m);
        out_.push_back(ArchDirEntry{std::move(m), archive ? kEntryIsArchive : uint16_t{0}});
        if (full()) break;
      }
      if (page->size() < q.limit) break;
      q.after = page->back().name;
    }
    Flush(nullptr);
    return Status::OK();
  }

  std::vector<ArchDirEntry> Take() { return std::move(out_); }

 private:
  bool full() const { return out_.size() >= q_.limit; }

  // The files of archive `parent` that may go on this page wait for their place in the order.
  void Pend(const ObjectMeta& parent) {
    for (const auto& m : Members(store_, bucket_, parent.name)) {
      std::string name = parent.name + "/" + m.name;
      if (name <= q_.after || !name.starts_with(q_.prefix)) continue;
      ArchDirEntry e{parent, kEntryInArch};
      e.meta.name = name;
      e.meta.size = m.size;
      e.meta.cksum_type.clear();
      e.meta.cksum_value.clear();
      e.meta.custom.clear();
      pending_.emplace(std::move(name), std::move(e));
    }
  }

  // Emits the pending files that sort before `next` (all of them if null).
  void Flush(const std::string* next) {
    while (!pending_.empty() && !full() && (!next || pending_.begin()->first < *next)) {
      out_.push_back(std::move(pending_.begin()->second));
      pending_.erase(pending_.begin());
    }
  }

  Store& store_;
  const std::string& bucket_;
  const ListQuery& q_;
  std::multimap<std::string, ArchDirEntry> pending_;
  std::vector<ArchDirEntry> out_;
};

}  // namespace

Result<std::vector<ArchDirEntry>> ListWithArchives(Store& store, const std::string& bucket, const ListQuery& q) {
  Lister l(store, bucket, q);
  AIS_RETURN_IF_ERROR(l.Run());
  return l.Take();
}

}  // namespace ais
