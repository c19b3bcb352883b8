#include "archive/tar_shard.h"

#include <algorithm>
#include <vector>

namespace ais {
namespace {

constexpr size_t kReadPiece = 256 << 10;

}  // namespace

TarShard::TarShard(std::shared_ptr<const ObjectHandle> obj)
    : Shard(obj, ArchiveFormat::kTar),
      scanner_([o = obj.get()](uint64_t off, void* buf, size_t len) { return o->ReadAt(off, buf, len); },
               obj->size()) {}

Result<bool> TarShard::ScanOne() {
  TarEntry e;
  auto more = scanner_.Next(&e);
  if (!more.ok()) return more.status();
  if (!*more) {
    complete_ = true;
    return false;
  }
  if (e.regular) {
    by_key_.try_emplace(std::string(Key(e.name)), members_.size());
    members_.push_back(Member{.name = std::move(e.name), .size = e.size, .offset = e.offset});
  }
  return true;
}

Result<Shard::Member> TarShard::Find(std::string_view path) {
  std::lock_guard lock(mu_);
  std::string key(Key(path));
  for (;;) {
    if (auto it = by_key_.find(key); it != by_key_.end()) return members_[it->second];
    if (complete_) return Status::NotFound(std::string(path));
    auto more = ScanOne();
    if (!more.ok()) return more.status();
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
  std::vector<Member> all;
  {
    std::lock_guard lock(mu_);
    while (!complete_) {
      auto more = ScanOne();
      if (!more.ok()) return more.status();
    }
    all = members_;
  }
  for (const auto& m : all) AIS_RETURN_IF_ERROR(fn(m));
  return Status::OK();
}

}  // namespace ais
