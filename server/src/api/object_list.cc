#include "api/object_list.h"

#include <ctime>
#include <msgpack.hpp>

#include "util/json_text.h"
#include "util/msgpack_sink.h"
#include "util/strings.h"

namespace ais {
namespace {

std::string JoinCustom(const ObjectMeta& m) {
  std::string out;
  for (auto& [k, v] : m.custom) {
    if (!out.empty()) out.push_back(',');
    out += k + "=" + v;
  }
  return out;
}

constexpr uint16_t kInArchFlag = 128;  // AIS EntryInArch (archive/arch_dir.h lists them)

// Past every valid UTF-8 name that starts with what precedes it: no UTF-8 byte is 0xFF.
constexpr std::string_view kPastSubtree = "\xff\xff\xff\xff";

uint16_t EntryFlags(const ObjectMeta& m, const ListProps& props) {
  return static_cast<uint16_t>(kEntryIsCached | (props.chunked && m.chunked() ? kEntryIsChunked : 0));
}

std::string FormatTime(int64_t unix_ns, const char* layout) {
  std::time_t secs = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), layout, &tm);
  return std::string(buf, n);
}

}  // namespace

Result<ListProps> ListProps::Parse(const std::string& props) {
  ListProps p;
  if (props.empty()) return p;  // name,size,cached
  p.size = false;
  for (auto raw : Split(props, ',')) {
    std::string_view name = raw;
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name == "size") p.size = true;
    else if (name == "version") p.version = true;
    else if (name == "checksum") p.checksum = true;
    else if (name == "atime") p.atime = true;
    else if (name == "copies") p.copies = true;
    else if (name == "custom") p.custom = true;
    else if (name == "location") p.location = true;
    else if (name == "name" || name == "cached" || name == "status" || name == "ec" || name == "chunked" ||
             name == "last-modified" || name == "etag" || name.empty()) continue;
    else return Status::InvalidArgument("invalid property \"" + std::string(name) + "\" in props list");
  }
  return p;
}

Result<ListProps> ListProps::Parse(const std::string& props, uint64_t flags) {
  auto p = Parse(props);
  if (!p.ok()) return p;
  if (flags & kLsNameOnly) return ListProps{.size = false, .chunked = false};
  if (flags & kLsNameSize) return ListProps{};
  return p;
}

std::string NoRecursionDir(std::string_view prefix, std::string_view name) {
  size_t start = prefix.size();
  // A prefix that names a directory without its '/' ("a" for "a/x") is walked into, as "a/".
  if (!prefix.empty() && prefix.back() != '/' && start < name.size() && name[start] == '/') ++start;
  size_t slash = name.find('/', start);
  if (slash == std::string_view::npos) return {};
  return std::string(name.substr(0, slash + 1));
}

Result<std::vector<ListEntry>> ListNoRecursion(const std::string& prefix, const std::string& after, size_t limit,
                                               bool no_dirs, const ListFetch& fetch) {
  // Every name maps to itself or to a directory that is a prefix of it, and every name below
  // that directory maps to it: the mapping keeps name order, so a directory's names come in one
  // run and the entries leave in order. `last` is the greatest entry given or skipped so far.
  constexpr size_t kBatch = 256;  // names read ahead; a directory ends the batch
  std::vector<ListEntry> out;
  std::string last = after;
  std::string cursor = after.ends_with('/') ? after + std::string(kPastSubtree) : after;
  // Files inside an archive (LsArchDir) come right after it: they are listed when it was, and at
  // the start of a page that continues after an entry (the previous page may end inside one).
  bool members_pass = !after.empty() && !after.ends_with('/');
  while (out.size() < limit) {
    size_t want = std::min(kBatch, limit - out.size());
    auto batch = fetch(cursor, want);
    if (!batch.ok()) return batch.status();
    bool refetch = false;
    for (auto& e : *batch) {
      cursor = e.meta.name;
      if ((e.flags & kInArchFlag) && members_pass) {
        last = e.meta.name;
        out.push_back(std::move(e));
      } else if (std::string dir = NoRecursionDir(prefix, e.meta.name); dir.empty()) {
        if (e.meta.name <= last) continue;
        last = e.meta.name;
        members_pass = true;
        out.push_back(std::move(e));
      } else {
        cursor = dir + std::string(kPastSubtree);
        refetch = true;
        members_pass = false;
        if (dir > last) {
          last = dir;
          if (!no_dirs) {
            ListEntry d;
            d.meta.name = std::move(dir);
            d.flags = kEntryIsDir;
            out.push_back(std::move(d));
          }
        }
      }
      if (refetch || out.size() == limit) break;
    }
    if (!refetch && batch->size() < want) break;  // the bucket has no more under the prefix
  }
  return out;
}

void ListObjectsMsg::Read(JsonFields& f) {
  f.Str("prefix", &prefix).Str("props", &props).Str("continuation_token", &continuation_token);
  f.Str("uuid", &uuid).Str("start_after", &start_after).Uint("pagesize", &page_size);
  // "flags" is a decimal string in Go (`json:",string"`); a number is accepted too.
  const nlohmann::json* fl = nullptr;
  f.Raw("flags", &fl);
  if (fl != nullptr && f.ok()) {
    std::optional<uint64_t> n;
    if (fl->is_number_unsigned()) n = fl->get<uint64_t>();
    else if (fl->is_string()) n = ParseUint(fl->get_ref<const std::string&>());
    if (!n) f.Fail("flags", "expecting a decimal string of flag bits, got " + fl->dump().substr(0, 64));
    else flags = *n;
  }
  // Pinning to a target, atime layout and backend headers mean nothing on one node.
  f.Unused(JsonFields::Kind::kString, {"target", "time_format"}).Unused(JsonFields::Kind::kObject, {"hdr"});
  while (prefix.ends_with('*')) prefix.pop_back();
}

Result<ListObjectsMsg> ListObjectsMsg::FromJson(const nlohmann::json& v) {
  ListObjectsMsg m;
  JsonFields f(v, "value");
  m.Read(f);
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

namespace {

void PackEntry(msgpack::packer<MsgpackStringSink>& pk, std::string_view name, const ObjectMeta& m, const ListProps& props,
               const std::string& location, uint16_t extra_flags, bool local) {
  if (extra_flags & kEntryIsDir) {
    pk.pack_map(2);
    pk.pack("n");
    pk.pack(name);
    pk.pack("f");
    pk.pack(kEntryIsDir);
    return;
  }
  // A remote object that is not cached has no access time, version, location or copies here.
  const bool stored = local || (extra_flags & kEntryIsCached);
  const bool custom = props.custom && !m.custom.empty();
  const bool cs = props.checksum && !m.cksum_value.empty();
  const bool atime = props.atime && stored;
  const bool version = props.version && stored;
  const bool where = props.location && stored;
  const bool copies = props.copies && stored;
  const uint32_t n = 2 + (cs ? 1 : 0) + (atime ? 1 : 0) + (version ? 1 : 0) + (where ? 1 : 0) + (custom ? 1 : 0) +
                     (props.size && m.size > 0 ? 1 : 0) + (copies ? 1 : 0);
  pk.pack_map(n);
  pk.pack("n");
  pk.pack(name);
  if (cs) {
    pk.pack("cs");
    pk.pack(m.cksum_value);
  }
  if (atime) {
    pk.pack("a");
    pk.pack(FormatRfc822(m.atime_ns));
  }
  if (version) {
    pk.pack("v");
    pk.pack(std::to_string(m.version));
  }
  if (where) {
    pk.pack("t");
    pk.pack(location);
  }
  if (custom) {
    pk.pack("m");
    pk.pack(JoinCustom(m));
  }
  if (props.size && m.size > 0) {
    pk.pack("s");
    pk.pack(static_cast<int64_t>(m.size));
  }
  if (copies) {
    pk.pack("c");
    pk.pack(int16_t{1});
  }
  pk.pack("f");
  pk.pack(static_cast<uint16_t>((stored ? EntryFlags(m, props) : 0) | extra_flags));
}

}  // namespace

std::string EncodeEntryMsgpack(const ObjectMeta& m, const ListProps& props, const std::string& location,
                               uint16_t extra_flags, bool local) {
  std::string out;
  out.reserve(64 + m.name.size());
  MsgpackStringSink sink{&out};
  msgpack::packer<MsgpackStringSink> pk(sink);
  PackEntry(pk, m.name, m, props, location, extra_flags, local);
  return out;
}

MsgpackPageBuilder::MsgpackPageBuilder(const ListProps& props, std::string location)
    : props_(props), location_(std::move(location)) {}

void MsgpackPageBuilder::Add(std::string_view name, const ObjectMeta& m) {
  MsgpackStringSink sink{&entries_};
  msgpack::packer<MsgpackStringSink> pk(sink);
  PackEntry(pk, name, m, props_, location_, 0, true);
  ++count_;
}

std::string MsgpackPageBuilder::Finish(const std::string& uuid, const std::string& token) const {
  return EncodeRawPageMsgpack(uuid, token, {entries_}, count_);
}

std::string EncodeRawPageMsgpack(const std::string& uuid, const std::string& token,
                                 const std::vector<std::string_view>& entries) {
  return EncodeRawPageMsgpack(uuid, token, entries, entries.size());
}

std::string EncodeRawPageMsgpack(const std::string& uuid, const std::string& token,
                                 const std::vector<std::string_view>& packed, size_t count) {
  size_t total = 64 + uuid.size() + token.size();
  for (auto e : packed) total += e.size();
  std::string out;
  out.reserve(total);
  MsgpackStringSink sink{&out};
  msgpack::packer<MsgpackStringSink> pk(sink);
  pk.pack_map(4);
  pk.pack("UUID");
  pk.pack(uuid);
  pk.pack("ContinuationToken");
  pk.pack(token);
  pk.pack("Entries");
  pk.pack_array(static_cast<uint32_t>(count));
  for (auto e : packed) out.append(e);
  pk.pack("Flags");
  pk.pack(uint32_t{0});
  return out;
}

std::string EncodeRawPageJson(const std::string& uuid, const std::string& token,
                              const std::vector<std::string_view>& entries) {
  static const std::pair<const char*, const char*> kKeys[] = {
      {"n", "name"}, {"cs", "checksum"}, {"a", "atime"},     {"v", "version"}, {"t", "location"},
      {"m", "custom-md"}, {"s", "size"}, {"c", "copies"}, {"f", "flags"}};
  nlohmann::json out = nlohmann::json::array();
  for (auto e : entries) {
    auto m = nlohmann::json::from_msgpack(e, true, false);
    nlohmann::json j = nlohmann::json::object();
    if (m.is_object()) {
      for (auto& [short_key, long_key] : kKeys) {
        if (!m.contains(short_key)) continue;
        j[long_key] = std::string(short_key) == "s" ? nlohmann::json(std::to_string(m[short_key].get<int64_t>()))
                                                   : m[short_key];
      }
    }
    out.push_back(std::move(j));
  }
  nlohmann::json page = {{"uuid", uuid}, {"continuation_token", token}, {"entries", std::move(out)}, {"flags", 0}};
  return JsonText(page);
}

std::string EncodeListPageMsgpack(const ListPage& page, const ListProps& props, const std::string& location) {
  std::string entries;
  MsgpackStringSink sink{&entries};
  msgpack::packer<MsgpackStringSink> pk(sink);
  for (size_t i = 0; i < page.entries.size(); ++i) {
    const uint16_t extra = i < page.extra_flags.size() ? page.extra_flags[i] : 0;
    PackEntry(pk, page.entries[i].name, page.entries[i], props, location, extra, !page.remote);
  }
  return EncodeRawPageMsgpack(page.uuid, page.continuation_token, {entries}, page.entries.size());
}

std::string EncodeListPageJson(const ListPage& page, const ListProps& props, const std::string& location) {
  nlohmann::json entries = nlohmann::json::array();
  for (size_t i = 0; i < page.entries.size(); ++i) {
    const ObjectMeta& m = page.entries[i];
    uint16_t extra = i < page.extra_flags.size() ? page.extra_flags[i] : 0;
    if (extra & kEntryIsDir) {
      entries.push_back({{"name", m.name}, {"flags", kEntryIsDir}});
      continue;
    }
    const bool stored = !page.remote || (extra & kEntryIsCached);
    nlohmann::json e = {{"name", m.name}, {"flags", static_cast<uint16_t>((stored ? EntryFlags(m, props) : 0) | extra)}};
    if (props.checksum && !m.cksum_value.empty()) e["checksum"] = m.cksum_value;
    if (props.atime && stored) e["atime"] = FormatRfc822(m.atime_ns);
    if (props.version && stored) e["version"] = std::to_string(m.version);
    if (props.location && stored) e["location"] = location;
    if (props.custom && !m.custom.empty()) e["custom-md"] = JoinCustom(m);
    if (props.size && m.size > 0) e["size"] = std::to_string(m.size);
    if (props.copies && stored) e["copies"] = 1;
    entries.push_back(std::move(e));
  }
  nlohmann::json j = {{"uuid", page.uuid},
                      {"continuation_token", page.continuation_token},
                      {"entries", std::move(entries)},
                      {"flags", 0}};
  return JsonText(j);
}

std::string FormatRfc822(int64_t unix_ns) { return FormatTime(unix_ns, "%d %b %y %H:%M UTC"); }

std::string FormatHttpDate(int64_t unix_ns) { return FormatTime(unix_ns, "%a, %d %b %Y %H:%M:%S GMT"); }

}  // namespace ais
