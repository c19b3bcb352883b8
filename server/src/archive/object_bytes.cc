#include "archive/object_bytes.h"

#include <algorithm>

#include "util/file.h"

namespace ais {
namespace {

constexpr int kOpenRetries = 3;

}  // namespace

Result<std::shared_ptr<ObjectBytes>> ObjectBytes::Open(Store& store, const std::string& bucket,
                                                       const std::string& name) {
  auto reopen = [&] { return store.Open(bucket, name); };
  auto h = reopen();
  if (!h.ok()) return h.status();
  return Open(std::move(*h), reopen);
}

Result<std::shared_ptr<ObjectBytes>> ObjectBytes::Open(ObjectHandle h,
                                                       const std::function<Result<ObjectHandle>()>& reopen) {
  for (int attempt = 0;; ++attempt) {
    auto segs = h.Slice(0, h.meta().size);
    if (!segs.ok()) {
      if (segs.status().code() != Status::Code::kConflict || attempt >= kOpenRetries) return segs.status();
      auto again = reopen();
      if (!again.ok()) return again.status();
      h = std::move(*again);
      continue;
    }
    std::shared_ptr<ObjectBytes> ob(new ObjectBytes());
    ob->handle_ = std::move(h);
    ob->segments_ = std::move(*segs);
    uint64_t pos = 0;
    for (const auto& s : ob->segments_) {
      ob->starts_.push_back(pos);
      pos += s.len;
    }
    return ob;
  }
}

std::vector<FileSegment> ObjectBytes::Slice(uint64_t off, uint64_t len) const {
  std::vector<FileSegment> out;
  if (len == 0) return out;
  auto it = std::upper_bound(starts_.begin(), starts_.end(), off);
  size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
  const uint64_t end = off + len;
  for (; i < segments_.size() && starts_[i] < end; ++i) {
    uint64_t s = std::max(off, starts_[i]);
    uint64_t e = std::min(end, starts_[i] + segments_[i].len);
    out.push_back({segments_[i].fd, segments_[i].offset + (s - starts_[i]), e - s});
  }
  return out;
}

Status ObjectBytes::ReadAt(uint64_t off, void* buf, size_t len) const {
  char* p = static_cast<char*>(buf);
  for (const auto& s : Slice(off, len)) {
    AIS_RETURN_IF_ERROR(PreadAll(s.fd, p, s.len, s.offset));
    p += s.len;
  }
  return Status::OK();
}

}  // namespace ais
