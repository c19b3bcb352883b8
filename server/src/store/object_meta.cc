#include "store/object_meta.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "util/file.h"

namespace ais {
namespace {

constexpr char kMagic[8] = {'A', 'I', 'S', 'O', 'B', 'J', '0', '1'};
// Room for the fields that change after the header is sized: checksum (<=128 hex), size, version.
constexpr uint64_t kLateFieldsSlack = 256;

nlohmann::json ToJson(const ObjectMeta& m) {
  nlohmann::json j;
  j["n"] = m.name;
  j["s"] = m.size;
  j["v"] = m.version;
  j["ct"] = m.cksum_type;
  j["cv"] = m.cksum_value;
  j["a"] = m.atime_ns;
  auto& md = j["md"] = nlohmann::json::array();
  for (auto& [k, v] : m.custom) md.push_back({k, v});
  if (m.chunked()) {
    j["u"] = m.upload_id;
    j["cs"] = m.chunk_sizes;
  }
  return j;
}

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
uint64_t AlignUp(uint64_t n) { return (n + kDataAlign - 1) / kDataAlign * kDataAlign; }

}  // namespace

uint64_t ObjectMeta::max_chunk_size() const {
  return chunk_sizes.empty() ? 0 : *std::max_element(chunk_sizes.begin(), chunk_sizes.end());
}

uint64_t ReservedDataOffset(const ObjectMeta& meta) {
  auto packed = nlohmann::json::to_msgpack(ToJson(meta));
  return AlignUp(kObjHeaderSize + packed.size() + kLateFieldsSlack);
}

std::string EncodeObjectHeader(const ObjectMeta& meta, bool inline_data, uint64_t* data_offset) {
  auto packed = nlohmann::json::to_msgpack(ToJson(meta));
  uint64_t header_len = kObjHeaderSize + packed.size();
  uint64_t offset = inline_data ? std::max<uint64_t>(*data_offset, AlignUp(header_len)) : 0;
  *data_offset = offset;
  std::string out(kObjHeaderSize, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutU32(out.data() + 8, static_cast<uint32_t>(packed.size()));
  PutU32(out.data() + 12, static_cast<uint32_t>(offset));
  out.append(reinterpret_cast<const char*>(packed.data()), packed.size());
  if (inline_data) out.resize(offset, '\0');
  return out;
}

Result<ObjectMeta> ReadObjectHeader(int fd, uint64_t* data_offset) {
  // Enough for the metadata of most objects (name, checksum, a few custom keys: ~200 bytes);
  // longer metadata takes a second read. Not the whole 4 KiB block: GetBatch opens an object per
  // item, and copying the block's unused rest was a fifth of the bytes it read for 10 KiB objects.
  char buf[1024];
  ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
  if (n < static_cast<ssize_t>(kObjHeaderSize) || std::memcmp(buf, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("object header is missing or damaged");
  }
  uint32_t meta_len = GetU32(buf + 8);
  *data_offset = GetU32(buf + 12);
  std::string packed;
  if (kObjHeaderSize + meta_len <= static_cast<size_t>(n)) {
    packed.assign(buf + kObjHeaderSize, meta_len);
  } else {
    // Trust the length only as far as the file goes: a damaged one must not allocate up to 4 GiB.
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "fstat");
    if (kObjHeaderSize + uint64_t{meta_len} > static_cast<uint64_t>(st.st_size)) {
      return Status::Corruption("object header is truncated");
    }
    packed.resize(meta_len);
    AIS_RETURN_IF_ERROR(PreadAll(fd, packed.data(), meta_len, kObjHeaderSize));
  }
  auto j = nlohmann::json::from_msgpack(packed, true, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("object metadata is damaged");
  ObjectMeta m;
  try {
    m.name = j.at("n").get<std::string>();
    m.size = j.at("s").get<uint64_t>();
    m.version = j.at("v").get<uint64_t>();
    m.cksum_type = j.at("ct").get<std::string>();
    m.cksum_value = j.at("cv").get<std::string>();
    m.atime_ns = j.at("a").get<int64_t>();
    for (auto& kv : j.at("md")) m.custom.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    if (j.contains("u")) {
      m.upload_id = j["u"].get<std::string>();
      m.chunk_sizes = j.at("cs").get<std::vector<uint64_t>>();
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("object metadata is damaged: ") + e.what());
  }
  return m;
}

}  // namespace ais
