#include "store/object_scanner.h"

#include <fcntl.h>

#include "util/file.h"

namespace ais {

ObjectScanner::ObjectScanner(const Mountpaths& mps, const std::string& bucket, std::string prefix,
                             std::string after) {
  for (size_t mp = 0; mp < mps.size(); ++mp) walkers_.emplace_back(mps.ObjectsDir(mp, bucket), prefix, after);
}

Status ObjectScanner::Advance(size_t walker) {
  Head h{.name = {}, .path = {}, .walker = walker};
  auto more = walkers_[walker].Next(&h.name, &h.path);
  if (!more.ok()) return more.status();
  if (*more) heap_.push(std::move(h));
  return Status::OK();
}

Result<bool> ObjectScanner::Next(ObjectMeta* meta) {
  if (!started_) {
    started_ = true;
    for (size_t i = 0; i < walkers_.size(); ++i) AIS_RETURN_IF_ERROR(Advance(i));
  }
  while (!heap_.empty()) {
    Head h = heap_.top();
    heap_.pop();
    AIS_RETURN_IF_ERROR(Advance(h.walker));
    auto fd = OpenFile(h.path, O_RDONLY);
    if (!fd.ok()) {
      if (fd.status().IsNotFound()) continue;  // deleted while scanning
      return fd.status();
    }
    uint64_t offset = 0;
    auto m = ReadObjectHeader(fd->get(), &offset);
    if (!m.ok()) return m.status();
    *meta = std::move(*m);
    meta->name = std::move(h.name);
    return true;
  }
  return false;
}

}  // namespace ais
