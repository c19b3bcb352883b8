#include "archive/tar_shard.h"

#include <algorithm>
#include <vector>

namespace ais {
namespace {

constexpr size_t kReadPiece = 256 << 10;

}  // namespace

TarShard::TarShard(std::shared_ptr<const ObjectHandle> obj)
    : Shard(obj, ArchiveFormat::kTar),
      cache_key_(obj->bucket() + '\0' + obj->meta().name),
      identity_(TarIndexCache::Identity::Of(obj->meta())),
      index_(SharedTarIndexes().Get(cache_key_, identity_)),
      scanner_(NewScanner()) {}

TarScanner TarShard::NewScanner() const {
  return TarScanner([o = obj_.get()](uint64_t off, void* buf, size_t len) { return o->ReadAt(off, buf, len); },
                    obj_->size());
}

Result<bool> TarShard::ScanOne() {
  TarEntry e;
  auto more = scanner_.Next(&e);
  if (!more.ok()) return more.status();
  if (!*more) {
    complete_ = true;
    return false;
  }
  if (e.regular) {
    partial_.by_key.try_emplace(std::string(Key(e.name)), partial_.members.size());
    partial_.members.push_back(Member{.name = std::move(e.name), .size = e.size, .offset = e.offset});
  }
  return true;
}

void TarShard::Publish() {
  index_ = std::make_shared<const TarIndex>(std::move(partial_));
  partial_ = {};
  SharedTarIndexes().Put(cache_key_, identity_, index_);
}

Result<Shard::Member> TarShard::Find(std::string_view path) {
  const std::string key(Key(path));
  std::lock_guard lock(mu_);
  if (!index_) {
    // The whole shard at once (its next lookups, in this request or a later one, cost nothing),
    // unless it is huge.
    while (!complete_ && partial_.members.size() < kMaxIndexedMembers) {
      auto more = ScanOne();
      if (!more.ok()) return more.status();
    }
    if (complete_) Publish();
  }
  if (index_) {
    auto it = index_->by_key.find(key);
    if (it == index_->by_key.end()) return Status::NotFound(std::string(path));
    return index_->members[it->second];
  }
  // A huge shard: its first members are kept; past them, the rest is walked for this lookup.
  if (auto it = partial_.by_key.find(key); it != partial_.by_key.end()) return partial_.members[it->second];
  TarScanner rest = scanner_;  // (a copy: from the first member not kept)
  for (TarEntry e;;) {
    auto more = rest.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return Status::NotFound(std::string(path));
    if (e.regular && Key(e.name) == key) return Member{.name = std::move(e.name), .size = e.size, .offset = e.offset};
  }
}

Status TarShard::Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) {
  auto m = Find(path);
  if (!m.ok()) return m.status();
  std::vector<char> buf(static_cast<size_t>(std::min<uint64_t>(len, kReadPiece)));
  for (uint64_t done = 0; done < len;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), len - done));
    AIS_RETURN_IF_ERROR(obj_->ReadAt(*m->offset + start + done, buf.data(), n));
    AIS_RETURN_IF_ERROR(out(buf.data(), n));
    done += n;
  }
  return Status::OK();
}

Status TarShard::ForEach(const std::function<Status(const Member&)>& fn) {
  std::shared_ptr<const TarIndex> all;
  {
    std::lock_guard lock(mu_);
    if (!index_) {
      while (!complete_ && partial_.members.size() < kMaxIndexedMembers) {
        auto more = ScanOne();
        if (!more.ok()) return more.status();
      }
      if (complete_) Publish();
    }
    all = index_;
  }
  if (all) {
    for (const auto& m : all->members) AIS_RETURN_IF_ERROR(fn(m));
    return Status::OK();
  }
  TarScanner walk = NewScanner();  // a huge shard: member by member, keeping nothing
  for (TarEntry e;;) {
    auto more = walk.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return Status::OK();
    if (e.regular) AIS_RETURN_IF_ERROR(fn(Member{.name = std::move(e.name), .size = e.size, .offset = e.offset}));
  }
}

}  // namespace ais
