// Shard: an archived object (.tar, .tgz/.tar.gz, .tar.lz4, .zip) opened for reading its files.
// Within one request a shard is opened once and shared by the threads that fetch items, so
// every implementation is thread-safe.
//
// Member names match as AIS matches them (getbatch.md §7): exactly, or equal after dropping one
// leading '/' on either side; the first match in archive order wins; only regular files count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "archive/archive_format.h"
#include "store/object_handle.h"
#include "util/status.h"

namespace ais {

class Shard {
 public:
  struct Member {
    std::string name;  // as stored in the archive
    uint64_t size = 0;
    // Where the file's bytes lie in the object when they are stored as they are (uncompressed
    // tar): they can then be sent straight from the object's files.
    std::optional<uint64_t> offset;
  };
  using ByteSink = std::function<Status(const char* data, size_t len)>;

  // The format is `hint` if given, else what `objname`'s suffix says, else what the first bytes
  // say; none of these -> kInvalidArgument.
  static Result<std::shared_ptr<Shard>> Open(std::shared_ptr<const ObjectHandle> obj, std::string_view objname,
                                             std::optional<ArchiveFormat> hint);
  virtual ~Shard() = default;

  ArchiveFormat format() const { return format_; }
  const std::shared_ptr<const ObjectHandle>& object() const { return obj_; }

  // The member `path` names; kNotFound if there is none. A damaged archive is kCorruption.
  virtual Result<Member> Find(std::string_view path) = 0;
  // Bytes [start, start+len) of member `path` to `out`, in order. REQUIRES: in range.
  virtual Status Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) = 0;
  // Every regular member, in archive order.
  virtual Status ForEach(const std::function<Status(const Member&)>& fn) = 0;

  // The lookup key of a member name or archpath: without one leading '/'.
  static std::string_view Key(std::string_view name) { return name.starts_with('/') ? name.substr(1) : name; }

 protected:
  Shard(std::shared_ptr<const ObjectHandle> obj, ArchiveFormat format) : obj_(std::move(obj)), format_(format) {}

  const std::shared_ptr<const ObjectHandle> obj_;
  const ArchiveFormat format_;
};

}  // namespace ais
