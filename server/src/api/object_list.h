// List-objects wire types: LsoMsg in (api/apc/lsmsg.go) and LsoRes out (cmn/objlist.go), in the
// msgpack form the official SDK requires and the JSON form other clients read.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_meta.h"
#include "util/json_fields.h"
#include "util/status.h"

namespace ais {

inline constexpr uint64_t kMaxPageSize = 10000;  // AIS MaxPageSizeAIS

// LsoMsg flag bits (apc.Ls*) that change what a listing returns.
inline constexpr uint64_t kLsCached = 1;
inline constexpr uint64_t kLsArchDir = 8;
inline constexpr uint64_t kLsNameOnly = 16;
inline constexpr uint64_t kLsNameSize = 32;
inline constexpr uint64_t kLsNotCached = 512;
inline constexpr uint64_t kLsNoRecursion = 2048;
inline constexpr uint64_t kLsNoDirs = 8192;
inline constexpr uint64_t kLsNbi = 32768;

// Which entry fields a listing carries (the LsoMsg `props` list).
struct ListProps {
  bool size = true, version = false, checksum = false, atime = false, copies = false, custom = false,
       location = false;
  bool chunked = true;  // EntryIsChunked reported: off only for LsNameOnly, which AIS lists without metadata
  static Result<ListProps> Parse(const std::string& props);
  // The props a listing with `flags` carries, as AIS's walk gives them: LsNameOnly wins over any
  // props (name and EntryIsCached only), LsNameSize narrows them to name and size.
  static Result<ListProps> Parse(const std::string& props, uint64_t flags);
};

struct ListObjectsMsg {
  std::string prefix;
  std::string props;
  uint64_t page_size = 0;
  std::string continuation_token;
  std::string uuid;
  uint64_t flags = 0;
  std::string start_after;

  // Reads the LsoMsg fields of `f` (create-inventory embeds them in its own message).
  void Read(JsonFields& f);
  static Result<ListObjectsMsg> FromJson(const nlohmann::json& value);
};

struct ListPage {
  std::string uuid;
  std::string continuation_token;
  std::vector<ObjectMeta> entries;
  std::vector<uint16_t> extra_flags;  // per entry, OR-ed into its flags (LsArchDir, kEntryIsDir); empty: none
  // A remote bucket's listing: an entry is a stored object (flags cached, chunked) only if its
  // extra_flags have kEntryIsCached; else its flags are extra_flags alone.
  bool remote = false;
};

inline constexpr uint16_t kEntryIsCached = 64;
inline constexpr uint16_t kEntryIsDir = 256;  // a virtual directory: name ending in '/', no other field
inline constexpr uint16_t kEntryIsChunked = 8192;

// One listed entry before encoding: an object, a file inside an archive (flags kEntryInArch, 128)
// or a virtual directory (kEntryIsDir; only meta.name is set).
struct ListEntry {
  ObjectMeta meta;
  uint16_t flags = 0;  // OR-ed into the entry's own flags
};

// LsNoRecursion (AIS cmn.CheckDirNoRecurs): how `name`, which starts with `prefix`, shows in a
// listing that does not descend into virtual directories. "" when it is listed itself (nothing
// but its base name follows the prefix's directory); else the directory entry that stands for it
// and for every name below it: the name up to and including the next '/'. A prefix without a
// trailing '/' that names a directory is that directory too, as AIS walks into it: for prefix
// "a", "a/x" is listed and "a/b/c" and "ab/c" stand behind "a/b/" and "ab/".
std::string NoRecursionDir(std::string_view prefix, std::string_view name);

// The bucket's entries under `prefix`, in name order, strictly after `after`, at most `limit`;
// sorted as the store lists them: by name, a file inside an archive right after its archive.
using ListFetch = std::function<Result<std::vector<ListEntry>>(const std::string& after, size_t limit)>;

// One page of an LsNoRecursion listing: the entries directly under `prefix` and one directory
// entry per virtual directory below it (left out with `no_dirs`, LsNoDirs), in name order
// (a directory sorts by its name with the '/'), strictly after `after` (a continuation token
// or start_after, which may be a directory), at most `limit`. Files inside a listed archive
// follow it (LsArchDir). The names below a directory are skipped, not read, when valid UTF-8.
Result<std::vector<ListEntry>> ListNoRecursion(const std::string& prefix, const std::string& after, size_t limit,
                                               bool no_dirs, const ListFetch& fetch);

std::string EncodeListPageMsgpack(const ListPage& page, const ListProps& props, const std::string& location);
std::string EncodeListPageJson(const ListPage& page, const ListProps& props, const std::string& location);

// One LsoEnt in msgpack form (empty fields omitted), as stored in inventories. `local`, or
// kEntryIsCached in extra_flags: the entry is a stored object (flags cached, chunked); else it is
// a remote object that is not cached: its flags are extra_flags alone, and it has no atime,
// version, location or copies (the same rules for every listing page).
std::string EncodeEntryMsgpack(const ObjectMeta& m, const ListProps& props, const std::string& location,
                               uint16_t extra_flags = 0, bool local = true);
// A page whose entries are already msgpack-encoded LsoEnt maps.
std::string EncodeRawPageMsgpack(const std::string& uuid, const std::string& token,
                                 const std::vector<std::string_view>& entries);
// The same with the `count` entries packed back to back in `packed`.
std::string EncodeRawPageMsgpack(const std::string& uuid, const std::string& token,
                                 const std::vector<std::string_view>& packed, size_t count);

// A local bucket's msgpack page, packed entry by entry into one buffer as the store lists them
// (no ObjectMeta copied, no allocation per entry but for props that format a string: atime,
// version, custom).
class MsgpackPageBuilder {
 public:
  MsgpackPageBuilder(const ListProps& props, std::string location);
  // Appends the LsoEnt of stored object `name` with header `m`.
  void Add(std::string_view name, const ObjectMeta& m);
  size_t count() const { return count_; }
  std::string Finish(const std::string& uuid, const std::string& token) const;

 private:
  const ListProps props_;
  const std::string location_;
  std::string entries_;  // `count_` packed LsoEnt maps
  size_t count_ = 0;
};
std::string EncodeRawPageJson(const std::string& uuid, const std::string& token,
                              const std::vector<std::string_view>& entries);
// Go's RFC822 layout "02 Jan 06 15:04 MST", in UTC.
std::string FormatRfc822(int64_t unix_ns);
// "Mon, 02 Jan 2006 15:04:05 GMT".
std::string FormatHttpDate(int64_t unix_ns);

}  // namespace ais
