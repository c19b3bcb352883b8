// ObjectBytes: random reads of one committed object (monolithic or chunked) through the file
// segments its handle opened. Holding it keeps the object's files open, so a request reads one
// consistent version even if the object is overwritten meanwhile. Thread-safe (pread only).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "store/store.h"
#include "util/status.h"

namespace ais {

class ObjectBytes {
 public:
  // Opens bucket/name; a chunked object overwritten mid-open is re-opened a few times.
  static Result<std::shared_ptr<ObjectBytes>> Open(Store& store, const std::string& bucket, const std::string& name);
  // The same over `h`, which `reopen` opened (and opens again for those re-opens).
  static Result<std::shared_ptr<ObjectBytes>> Open(ObjectHandle h, const std::function<Result<ObjectHandle>()>& reopen);

  const ObjectMeta& meta() const { return handle_.meta(); }
  uint64_t size() const { return handle_.meta().size; }
  // Reads exactly [off, off+len). REQUIRES: off + len <= size().
  Status ReadAt(uint64_t off, void* buf, size_t len) const;
  // The file segments covering [off, off+len). REQUIRES: off + len <= size().
  std::vector<FileSegment> Slice(uint64_t off, uint64_t len) const;

 private:
  ObjectBytes() = default;
  ObjectHandle handle_;
  std::vector<FileSegment> segments_;  // the whole object, in order
  std::vector<uint64_t> starts_;       // object offset of each segment
};

}  // namespace ais
