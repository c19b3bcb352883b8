// List-objects wire types: LsoMsg in (api/apc/lsmsg.go) and LsoRes out (cmn/objlist.go), in the
// msgpack form the official SDK requires and the JSON form other clients read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_meta.h"
#include "util/json_fields.h"
#include "util/status.h"

namespace ais {

inline constexpr uint64_t kMaxPageSize = 10000;  // AIS MaxPageSizeAIS

// Which entry fields a listing carries (the LsoMsg `props` list).
struct ListProps {
  bool size = true, version = false, checksum = false, atime = false, copies = false, custom = false,
       location = false;
  static Result<ListProps> Parse(const std::string& props);
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
  std::vector<uint16_t> extra_flags;  // per entry, OR-ed into its flags (LsArchDir); empty: none
  // A remote bucket's listing: an entry is cached (and chunked) only if its extra_flags say so.
  bool remote = false;
};

inline constexpr uint16_t kEntryIsCached = 64;
inline constexpr uint16_t kEntryIsChunked = 8192;
inline constexpr uint16_t kEntryIsDir = 256;

std::string EncodeListPageMsgpack(const ListPage& page, const ListProps& props, const std::string& location);
std::string EncodeListPageJson(const ListPage& page, const ListProps& props, const std::string& location);

// One LsoEnt in msgpack form (empty fields omitted), as stored in inventories. `local`: the
// entry is a stored object (flags cached, chunked); else its flags are extra_flags alone.
std::string EncodeEntryMsgpack(const ObjectMeta& m, const ListProps& props, const std::string& location,
                               uint16_t extra_flags = 0, bool local = true);
// A page whose entries are already msgpack-encoded LsoEnt maps.
std::string EncodeRawPageMsgpack(const std::string& uuid, const std::string& token,
                                 const std::vector<std::string_view>& entries);
std::string EncodeRawPageJson(const std::string& uuid, const std::string& token,
                              const std::vector<std::string_view>& entries);
// Go's RFC822 layout "02 Jan 06 15:04 MST", in UTC.
std::string FormatRfc822(int64_t unix_ns);
// "Mon, 02 Jan 2006 15:04:05 GMT".
std::string FormatHttpDate(int64_t unix_ns);

}  // namespace ais
