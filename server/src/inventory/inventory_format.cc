#include "inventory/inventory_format.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "store/bck.h"
#include "util/json_text.h"

namespace ais {
namespace {

constexpr char kMagic[8] = {'A', 'I', 'S', 'I', 'N', 'V', '0', '1'};
constexpr size_t kChunkHeader = 8 + 4 + 8;

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64At(std::string& out, size_t pos, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[pos + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// The bucket's uname as AIS writes it ("ais/@#/b/", "aws/@#/b/"): one bucket's inventories never
// share a prefix with another's.
std::string InventoryObjectPrefix(const std::string& bucket) {
  return std::string(KeyProvider(bucket)) + "/" + KeyNs(bucket).Uname() + "/" + std::string(KeyName(bucket)) + "/";
}

std::string InventoryObjectName(const std::string& bucket, const std::string& inventory) {
  return InventoryObjectPrefix(bucket) + inventory;
}

std::string InventoryIndex::ToJson() const {
  nlohmann::json cs = nlohmann::json::array();
  for (auto& c : chunks) cs.push_back({{"first", c.first}, {"last", c.last}, {"count", c.count}, {"xxhash", c.xxhash}});
  nlohmann::json j = {{"prefix", prefix},   {"props", props},     {"started", started},
                      {"finished", finished}, {"ntotal", ntotal}, {"names_per_chunk", names_per_chunk},
                      {"chunks", std::move(cs)}};
  return JsonText(j);
}

Result<InventoryIndex> InventoryIndex::FromJson(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("inventory index is damaged");
  InventoryIndex idx;
  try {
    idx.prefix = j.at("prefix").get<std::string>();
    idx.props = j.at("props").get<std::string>();
    idx.started = j.at("started").get<int64_t>();
    idx.finished = j.at("finished").get<int64_t>();
    idx.ntotal = j.at("ntotal").get<uint64_t>();
    idx.names_per_chunk = j.at("names_per_chunk").get<uint64_t>();
    for (auto& c : j.at("chunks")) {
      idx.chunks.push_back({c.at("first").get<std::string>(), c.at("last").get<std::string>(),
                            c.at("count").get<uint64_t>(), c.at("xxhash").get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("inventory index is damaged: ") + e.what());
  }
  return idx;
}

void InventoryChunkEncoder::Add(std::string_view name, std::string_view entry) {
  if (count_ == 0) first_ = name;
  last_ = name;
  PutU32(payload_, static_cast<uint32_t>(name.size()));
  payload_.append(name);
  PutU32(payload_, static_cast<uint32_t>(entry.size()));
  payload_.append(entry);
  ++count_;
}

std::string InventoryChunkEncoder::Finish(std::string* xxhash_hex) {
  uint64_t h = XXH64(payload_.data(), payload_.size(), 0);
  *xxhash_hex = Hex64(h);
  std::string out(kMagic, sizeof(kMagic));
  PutU32(out, static_cast<uint32_t>(count_));
  out.resize(kChunkHeader);
  PutU64At(out, 12, h);
  out += payload_;
  payload_.clear();
  first_.clear();
  last_.clear();
  count_ = 0;
  return out;
}

Result<InventoryChunk> DecodeInventoryChunk(std::string raw) {
  if (raw.size() < kChunkHeader || std::memcmp(raw.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("inventory chunk header is damaged");
  }
  uint64_t count = GetLE(raw.data() + 8, 4);
  uint64_t hash = GetLE(raw.data() + 12, 8);
  if (XXH64(raw.data() + kChunkHeader, raw.size() - kChunkHeader, 0) != hash) {
    return Status::Corruption("inventory chunk checksum mismatch");
  }
  // The count sits outside the hashed payload: bound it by what the payload can hold (every
  // entry takes at least its two 4-byte lengths) before trusting it with an allocation.
  if (count > (raw.size() - kChunkHeader) / 8) return Status::Corruption("inventory chunk count is damaged");
  InventoryChunk chunk;
  chunk.raw = std::move(raw);
  chunk.entries.reserve(count);
  const char* p = chunk.raw.data() + kChunkHeader;
  const char* end = chunk.raw.data() + chunk.raw.size();
  for (uint64_t i = 0; i < count; ++i) {
    if (end - p < 4) return Status::Corruption("inventory chunk is truncated");
    auto nlen = GetLE(p, 4);
    p += 4;
    if (static_cast<uint64_t>(end - p) < nlen + 4) return Status::Corruption("inventory chunk is truncated");
    std::string_view name(p, nlen);
    p += nlen;
    auto elen = GetLE(p, 4);
    p += 4;
    if (static_cast<uint64_t>(end - p) < elen) return Status::Corruption("inventory chunk is truncated");
    chunk.entries.emplace_back(name, std::string_view(p, elen));
    p += elen;
  }
  if (p != end) return Status::Corruption("inventory chunk has trailing bytes");
  return chunk;
}

}  // namespace ais
