#include "inventory/inventory_catalog.h"

#include "store/bck.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "api/object_list.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/strings.h"

namespace ais {
namespace {

// Flag bits a create-inventory request may not carry (cached..s3 except name-only/name-size/no-dirs/NBI).
constexpr std::pair<int, const char*> kBadCreateFlags[] = {
    {0, "cached"},      {1, "missing"},        {2, "deleted"},           {3, "arch-dir"},
    {6, "bck-present"}, {7, "no-head-remote"}, {8, "no-add-remote"},     {9, "not-cached"},
    {10, "only-remote-props"}, {11, "no-recursion"}, {12, "diff"},       {14, "s3"}};
constexpr uint64_t kLsNameOnly = 1ULL << 4;
constexpr uint64_t kLsNameSize = 1ULL << 5;

std::string NormalizeProps(const CreateInventoryOptions& o) {
  if (o.flags & kLsNameOnly) return "name";
  if (o.flags & kLsNameSize) return o.props.empty() ? "name,size" : o.props + ",name,size";
  return o.props.empty() ? "name,size,cached" : o.props + ",cached";
}

}  // namespace

Status InventoryCatalog::ValidateName(const std::string& name) {
  if (name.size() > 64) return Status::InvalidArgument("inventory name is too long (max 64): \"" + name + "\"");
  if (name.empty() || name.find("..") != std::string::npos) {
    return Status::InvalidArgument("inventory name is invalid: \"" + name + "\"");
  }
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!ok) return Status::InvalidArgument("inventory name is invalid: \"" + name + "\"");
  }
  return Status::OK();
}

Status InventoryCatalog::EnsureSystemBucket() {
  if (store_.buckets().Get(kInventoryBucket)) return Status::OK();
  Status st = store_.CreateBucket(kInventoryBucket, nullptr);
  return st.code() == Status::Code::kAlreadyExists ? Status::OK() : st;
}

Result<std::vector<std::string>> InventoryCatalog::Names(const std::string& bucket) {
  std::vector<std::string> out;
  if (!store_.buckets().Get(kInventoryBucket)) return out;
  std::string prefix = InventoryObjectPrefix(bucket);
  ObjectWalk walk{.prefix = prefix, .after = {}, .headers = true, .stop = {}};
  Status st = store_.ForEachObject(kInventoryBucket, walk, [&](const WalkedObject& obj) {
    out.push_back(obj.name().substr(prefix.size()));
    return Status::OK();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::string> InventoryCatalog::StartCreate(const std::string& bucket, CreateInventoryOptions opts) {
  auto props = store_.GetBucket(bucket);
  if (!props.ok()) return props.status();
  if (opts.names_per_chunk == 0) opts.names_per_chunk = kDefaultNamesPerChunk;
  if (opts.names_per_chunk < kMinNamesPerChunk) return Status::InvalidArgument("names_per_chunk too small (min=2)");
  if (opts.names_per_chunk > kMaxNamesPerChunk) return Status::InvalidArgument("names_per_chunk too large (max=640000)");
  std::string bad;
  for (auto [bit, name] : kBadCreateFlags) {
    if (opts.flags & (1ULL << bit)) bad += (bad.empty() ? "" : ",") + std::string(name);
  }
  if (!bad.empty()) return Status::InvalidArgument("invalid 'create-inventory': flags:" + bad);
  auto lp = ListProps::Parse(opts.props);
  if (!lp.ok()) return lp.status();
  std::string id = "inv-" + RandomId(9);
  if (opts.name.empty()) opts.name = id;
  AIS_RETURN_IF_ERROR(ValidateName(opts.name));
  AIS_RETURN_IF_ERROR(EnsureSystemBucket());
  auto existing = Names(bucket);
  if (!existing.ok()) return existing.status();
  if (!existing->empty() && !opts.force) {
    std::string list;
    for (auto& n : *existing) list += (list.empty() ? "" : ", ") + InventoryObjectName(bucket, n);
    return Status::InvalidArgument("inventory for bucket " + BucketCname(bucket) + " already exists: [" + list +
                                   "] (use force to replace it)");
  }
  std::lock_guard lock(mu_);
  if (auto it = building_.find(bucket); it != building_.end()) {
    return Status::Conflict("create-inventory[" + it->second + "] is already running for bucket " + BucketCname(bucket));
  }
  building_[bucket] = id;
  std::string objname = InventoryObjectName(bucket, opts.name);
  jobs_.Start(
      "create-inventory", bucket,
      [this, bucket, objname, opts](JobControl& jc) {
        Status st = Build(jc, bucket, objname, opts);
        std::lock_guard l(mu_);
        building_.erase(bucket);
        return st;
      },
      id);
  return id;
}

Status InventoryCatalog::Build(JobControl& jc, const std::string& bucket, const std::string& objname,
                               const CreateInventoryOptions& opts) {
  if (opts.force) AIS_RETURN_IF_ERROR(Destroy(bucket, ""));
  InventoryIndex index;
  index.prefix = opts.prefix;
  index.props = NormalizeProps(opts);
  index.names_per_chunk = opts.names_per_chunk;
  index.started = NowNs();
  auto props = ListProps::Parse(index.props);
  if (!props.ok()) return props.status();
  auto upload = store_.MpuCreate(kInventoryBucket, objname, {});
  if (!upload.ok()) return upload.status();
  uint32_t part = 1;  // part 1, the index, is written last
  InventoryChunkEncoder enc;
  auto put_part = [&](uint32_t num, const std::string& data) -> Status {
    auto w = store_.MpuPart(kInventoryBucket, objname, *upload, num, data.size());
    if (!w.ok()) return w.status();
    AIS_RETURN_IF_ERROR((*w)->Write(data.data(), data.size()));
    return (*w)->Commit();
  };
  auto flush = [&]() -> Status {
    InventoryChunkInfo info{enc.first(), enc.last(), enc.count(), ""};
    std::string data = enc.Finish(&info.xxhash);
    AIS_RETURN_IF_ERROR(put_part(++part, data));
    index.chunks.push_back(std::move(info));
    return Status::OK();
  };
  const std::string location;
  auto add = [&](const ObjectMeta& m, uint16_t flags, bool local) -> Status {
    enc.Add(m.name, EncodeEntryMsgpack(m, *props, location, flags, local));
    ++index.ntotal;
    jc.Add(1, 0);
    return enc.count() == opts.names_per_chunk ? flush() : Status::OK();
  };
  auto scan_local = [&]() -> Status {
    ObjectWalk walk{.prefix = opts.prefix, .after = {}, .headers = true, .stop = [&jc] { return jc.aborted(); }};
    return store_.ForEachObject(bucket, walk, [&](const WalkedObject& obj) { return add(obj.Named(), 0, true); });
  };
  // A remote bucket's listing comes sorted by name, as the inventory keeps it.
  auto scan_remote = [&]() -> Status {
    std::string token;
    do {
      if (jc.aborted()) return Status::OK();
      auto page = opts.remote(token);
      if (!page.ok()) return page.status();
      for (const auto& e : page->first) AIS_RETURN_IF_ERROR(add(e.meta, e.flags, false));
      token = page->second;
    } while (!token.empty());
    return Status::OK();
  };
  auto body = [&]() -> Status {
    AIS_RETURN_IF_ERROR(opts.remote ? scan_remote() : scan_local());
    if (jc.aborted()) return Status::OK();
    if (enc.count() > 0) AIS_RETURN_IF_ERROR(flush());
    index.finished = NowNs();
    AIS_RETURN_IF_ERROR(put_part(1, index.ToJson()));
    std::vector<uint32_t> parts;
    for (uint32_t i = 1; i <= part; ++i) parts.push_back(i);
    return store_.MpuComplete(kInventoryBucket, objname, *upload, std::move(parts));
  };
  Status st = body();
  if (!st.ok() || jc.aborted()) (void)store_.MpuAbort(kInventoryBucket, objname, *upload);
  return st;
}

Result<nlohmann::json> InventoryCatalog::Show(const std::string& bucket, const std::string& name) {
  if (auto p = store_.GetBucket(bucket); !p.ok()) return p.status();
  auto names = Names(bucket);
  if (!names.ok()) return names.status();
  nlohmann::json out = nlohmann::json::object();
  for (auto& n : *names) {
    if (!name.empty() && n != name) continue;
    std::string objname = InventoryObjectName(bucket, n);
    auto inv = Load(objname);
    if (!inv.ok()) {
      if (inv.status().IsNotFound()) continue;  // destroyed meanwhile
      return inv.status();
    }
    const InventoryIndex& idx = *(*inv)->index;
    out[objname] = {{"bucket", BucketCname(bucket)},     {"name", n},
                    {"obj_name", objname},             {"size", (*inv)->handle.meta().size},
                    {"prefix", idx.prefix},            {"started", idx.started},
                    {"finished", idx.finished},        {"ntotal", idx.ntotal},
                    {"chunks", idx.chunks.size()},     {"nat", 1}};
  }
  return out;
}

Status InventoryCatalog::Destroy(const std::string& bucket, const std::string& name) {
  if (auto p = store_.GetBucket(bucket); !p.ok()) return p.status();
  auto names = Names(bucket);
  if (!names.ok()) return names.status();
  for (auto& n : *names) {
    if (!name.empty() && n != name) continue;
    Status st = store_.Delete(kInventoryBucket, InventoryObjectName(bucket, n));
    if (!st.ok() && !st.IsNotFound()) return st;
  }
  return Status::OK();
}

Result<std::string> InventoryCatalog::Resolve(const std::string& bucket, const std::string& requested) {
  if (auto p = store_.GetBucket(bucket); !p.ok()) return p.status();
  if (!requested.empty()) {
    AIS_RETURN_IF_ERROR(ValidateName(requested));
    return requested;  // a missing one surfaces as 404 when it is opened
  }
  auto names = Names(bucket);
  if (!names.ok()) return names.status();
  if (names->empty()) return Status::InvalidArgument("bucket \"" + BucketCname(bucket) + "\" has no inventories");
  if (names->size() > 1) {
    return Status::InvalidArgument("missing \"Ais-Inv-Name\" header: bucket \"" + BucketCname(bucket) + "\" has " +
                                   std::to_string(names->size()) + " inventories; please specify which one");
  }
  return names->front();
}

Result<std::shared_ptr<InventoryCatalog::Loaded>> InventoryCatalog::Load(const std::string& objname) {
  if (!store_.buckets().Get(kInventoryBucket)) {
    return Status::NotFound("inventory " + objname + " does not exist");
  }
  auto h = store_.Open(kInventoryBucket, objname);
  if (!h.ok()) {
    if (h.status().IsNotFound()) return Status::NotFound("inventory ais://" + std::string(kInventoryBucket) + "/" + objname + " does not exist");
    return h.status();
  }
  auto inv = std::make_shared<Loaded>();
  inv->handle = std::move(*h);
  const ObjectMeta& m = inv->handle.meta();
  if (!m.chunked() || m.chunk_sizes.empty()) return Status::Corruption("inventory " + objname + " is damaged");
  uint64_t off = 0;
  for (uint64_t s : m.chunk_sizes) {
    inv->part_offsets.push_back(off);
    off += s;
  }
  auto segs = inv->handle.Slice(0, m.chunk_sizes[0]);
  if (!segs.ok()) return segs.status();
  std::string text(m.chunk_sizes[0], '\0');
  AIS_RETURN_IF_ERROR(ReadSegments(*segs, text.data()));
  auto idx = InventoryIndex::FromJson(text);
  if (!idx.ok()) return idx.status();
  if (idx->chunks.size() + 1 != m.chunk_sizes.size()) {
    return Status::Corruption("inventory " + objname + ": index lists " + std::to_string(idx->chunks.size()) +
                              " chunks, object has " + std::to_string(m.chunk_sizes.size() - 1));
  }
  inv->index = std::make_shared<const InventoryIndex>(std::move(*idx));
  return inv;
}

Result<std::shared_ptr<const InventoryChunk>> InventoryCatalog::ReadChunk(const std::string& objname, Loaded& inv,
                                                                          size_t k) {
  std::string key = objname + "\n" + inv.handle.meta().upload_id + "\n" + std::to_string(k);
  {
    std::lock_guard lock(mu_);
    for (auto it = chunk_cache_.begin(); it != chunk_cache_.end(); ++it) {
      if (it->first == key) {
        chunk_cache_.splice(chunk_cache_.begin(), chunk_cache_, it);
        return it->second;
      }
    }
  }
  const size_t part = k + 1;  // part 0 is the index
  uint64_t len = inv.handle.meta().chunk_sizes[part];
  auto segs = inv.handle.Slice(inv.part_offsets[part], len);
  if (!segs.ok()) return segs.status();
  std::string raw(len, '\0');
  AIS_RETURN_IF_ERROR(ReadSegments(*segs, raw.data()));
  auto chunk = DecodeInventoryChunk(std::move(raw));
  if (!chunk.ok()) {
    return Status::Corruption("inventory " + objname + " chunk " + std::to_string(k + 1) + ": " +
                              chunk.status().message());
  }
  const InventoryChunkInfo& info = inv.index->chunks[k];
  if (chunk->entries.size() != info.count) {
    return Status::Corruption("inventory " + objname + " chunk " + std::to_string(k + 1) + ": entry count mismatch");
  }
  auto shared = std::make_shared<const InventoryChunk>(std::move(*chunk));
  std::lock_guard lock(mu_);
  chunk_cache_.emplace_front(key, shared);
  if (chunk_cache_.size() > kChunkCacheSize) chunk_cache_.pop_back();
  return shared;
}

Result<InventoryPage> InventoryCatalog::Page(const std::string& bucket, const std::string& inventory,
                                             const std::string& prefix, const std::string& after, size_t limit) {
  std::string objname = InventoryObjectName(bucket, inventory);
  auto inv = Load(objname);
  if (!inv.ok()) return inv.status();
  const auto& chunks = (*inv)->index->chunks;
  // Names below this bound are skipped: after `after`, and not before the prefix.
  const std::string& floor = prefix > after ? prefix : after;
  auto first = std::partition_point(chunks.begin(), chunks.end(),
                                    [&](const InventoryChunkInfo& c) { return c.last < floor || c.last == after; });
  InventoryPage page;
  for (size_t k = static_cast<size_t>(first - chunks.begin()); k < chunks.size() && page.entries.size() < limit; ++k) {
    if (!prefix.empty() && chunks[k].first > prefix && !std::string_view(chunks[k].first).starts_with(prefix)) break;
    auto chunk = ReadChunk(objname, **inv, k);
    if (!chunk.ok()) return chunk.status();
    const auto& ents = (*chunk)->entries;
    auto it = std::partition_point(ents.begin(), ents.end(), [&](const auto& e) {
      return e.first < std::string_view(floor) || e.first == std::string_view(after);
    });
    bool past_prefix = false;
    for (; it != ents.end() && page.entries.size() < limit; ++it) {
      if (!it->first.starts_with(prefix)) {
        past_prefix = true;
        break;
      }
      page.entries.push_back(it->second);
      page.names.push_back(it->first);
      page.last_name = std::string(it->first);
    }
    page.chunks.push_back(*chunk);
    if (past_prefix) break;
  }
  return page;
}

Result<InventoryPage> InventoryCatalog::PageNoRecursion(const std::string& bucket, const std::string& inventory,
                                                        const std::string& prefix, const std::string& after,
                                                        size_t limit, bool no_dirs) {
  InventoryPage page;
  std::unordered_map<std::string_view, std::string_view> stored;  // name -> entry, views into page.chunks
  ListFetch fetch = [&](const std::string& from, size_t n) -> Result<std::vector<ListEntry>> {
    auto read = Page(bucket, inventory, prefix, from, n);
    if (!read.ok()) return read.status();
    std::vector<ListEntry> out(read->names.size());
    for (size_t i = 0; i < read->names.size(); ++i) {
      stored.emplace(read->names[i], read->entries[i]);
      out[i].meta.name = std::string(read->names[i]);
    }
    page.chunks.insert(page.chunks.end(), read->chunks.begin(), read->chunks.end());
    return out;
  };
  auto listed = ListNoRecursion(prefix, after, limit, no_dirs, fetch);
  if (!listed.ok()) return listed.status();
  // The directory entries, as a chunk of their own that lives as long as the page: each one's
  // name, then its msgpack map, in `raw`, viewed once `raw` is complete.
  auto dirs = std::make_shared<InventoryChunk>();
  std::vector<std::pair<size_t, size_t>> encoded;  // name length, entry length
  for (const ListEntry& e : *listed) {
    if (!(e.flags & kEntryIsDir)) continue;
    std::string entry = EncodeEntryMsgpack(e.meta, ListProps{}, "", kEntryIsDir, true);
    encoded.emplace_back(e.meta.name.size(), entry.size());
    dirs->raw += e.meta.name;
    dirs->raw += entry;
  }
  std::string_view raw = dirs->raw;
  for (auto [name_len, entry_len] : encoded) {
    dirs->entries.emplace_back(raw.substr(0, name_len), raw.substr(name_len, entry_len));
    raw.remove_prefix(name_len + entry_len);
  }
  auto dir = dirs->entries.begin();
  for (const ListEntry& e : *listed) {
    if (e.flags & kEntryIsDir) {
      page.names.push_back(dir->first);
      page.entries.push_back(dir->second);
      ++dir;
    } else {
      auto it = stored.find(e.meta.name);
      page.names.push_back(it->first);
      page.entries.push_back(it->second);
    }
    page.last_name = e.meta.name;
  }
  page.chunks.push_back(std::move(dirs));
  return page;
}

}  // namespace ais
