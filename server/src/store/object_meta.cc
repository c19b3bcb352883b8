#include "store/object_meta.h"

#include <sys/stat.h>
#include <sys/uio.h>
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

// A msgpack reader over one header's bytes: the types ToJson's values take (maps, arrays,
// strings, integers) and skipping any value of a key it does not know. By hand rather than
// through nlohmann's SAX parser: GetBatch decodes a header per item, and the parser built a
// std::string per key and value (a quarter of the header read's user time).
class Msgpack {
 public:
  Msgpack(const char* p, size_t len) : p_(reinterpret_cast<const uint8_t*>(p)), end_(p_ + len) {}

  bool done() const { return p_ == end_; }

  bool Map(uint64_t* n) {
    uint8_t t = 0;
    if (!Byte(&t)) return false;
    if (t >= 0x80 && t <= 0x8f) {
      *n = t & 0x0f;
      return true;
    }
    if (t == 0xde) return Be(2, n);
    if (t == 0xdf) return Be(4, n);
    return false;
  }
  bool Array(uint64_t* n) {
    uint8_t t = 0;
    if (!Byte(&t)) return false;
    if (t >= 0x90 && t <= 0x9f) {
      *n = t & 0x0f;
      return true;
    }
    if (t == 0xdc) return Be(2, n);
    if (t == 0xdd) return Be(4, n);
    return false;
  }
  bool Str(std::string_view* s) {
    uint8_t t = 0;
    uint64_t len = 0;
    if (!Byte(&t)) return false;
    if (t >= 0xa0 && t <= 0xbf) {
      len = t & 0x1f;
    } else if (t >= 0xd9 && t <= 0xdb) {
      if (!Be(size_t{1} << (t - 0xd9), &len)) return false;
    } else {
      return false;
    }
    if (len > Left()) return false;
    *s = std::string_view(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    return true;
  }
  // A non-negative integer in an unsigned encoding (what nlohmann writes for one).
  bool Uint(uint64_t* v) {
    uint8_t t = 0;
    if (!Byte(&t)) return false;
    if (t <= 0x7f) {
      *v = t;
      return true;
    }
    if (t >= 0xcc && t <= 0xcf) return Be(size_t{1} << (t - 0xcc), v);
    return false;
  }
  // Any integer encoding.
  bool Int(int64_t* v) {
    if (p_ == end_) return false;
    const uint8_t t = *p_;
    if (t >= 0xe0) {  // negative fixint
      ++p_;
      *v = static_cast<int8_t>(t);
      return true;
    }
    if (t >= 0xd0 && t <= 0xd3) {
      ++p_;
      const size_t n = size_t{1} << (t - 0xd0);
      uint64_t u = 0;
      if (!Be(n, &u)) return false;
      if (n < 8 && (u >> (8 * n - 1)) != 0) u |= ~uint64_t{0} << (8 * n);  // sign-extend
      *v = static_cast<int64_t>(u);
      return true;
    }
    uint64_t u = 0;
    if (!Uint(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  // Skips one value of any type, nested ones included.
  bool Skip() {
    uint64_t pending = 1;  // values still to skip
    while (pending > 0) {
      --pending;
      uint8_t t = 0;
      if (!Byte(&t)) return false;
      uint64_t n = 0;
      if (t <= 0x7f || t >= 0xe0 || (t >= 0xc0 && t <= 0xc3 && t != 0xc1)) continue;  // fixint, nil, bool
      if (t >= 0x80 && t <= 0x8f) {
        pending += 2 * uint64_t{t & 0x0fu};
      } else if (t >= 0x90 && t <= 0x9f) {
        pending += t & 0x0f;
      } else if (t >= 0xa0 && t <= 0xbf) {
        if (!Advance(t & 0x1f)) return false;
      } else if (t == 0xdc || t == 0xdd || t == 0xde || t == 0xdf) {
        if (!Be(t == 0xdc || t == 0xde ? 2 : 4, &n)) return false;
        pending += t >= 0xde ? 2 * n : n;
      } else if (t >= 0xc4 && t <= 0xc6) {  // bin 8/16/32
        if (!Be(size_t{1} << (t - 0xc4), &n) || !Advance(n)) return false;
      } else if (t >= 0xd9 && t <= 0xdb) {  // str 8/16/32
        if (!Be(size_t{1} << (t - 0xd9), &n) || !Advance(n)) return false;
      } else if (t >= 0xc7 && t <= 0xc9) {  // ext 8/16/32: length, type, data
        if (!Be(size_t{1} << (t - 0xc7), &n) || !Advance(1 + n)) return false;
      } else if (t == 0xca || t == 0xcb) {  // float 32/64
        if (!Advance(t == 0xca ? 4 : 8)) return false;
      } else if (t >= 0xcc && t <= 0xd3) {  // uint/int 8..64
        if (!Advance(size_t{1} << ((t - 0xcc) & 3))) return false;
      } else if (t >= 0xd4 && t <= 0xd8) {  // fixext 1..16: type, data
        if (!Advance(1 + (size_t{1} << (t - 0xd4)))) return false;
      } else {
        return false;  // 0xc1: never used
      }
      if (pending > Left()) return false;  // each value takes a byte at least
    }
    return true;
  }

 private:
  uint64_t Left() const { return static_cast<uint64_t>(end_ - p_); }
  bool Byte(uint8_t* t) {
    if (p_ == end_) return false;
    *t = *p_++;
    return true;
  }
  bool Advance(uint64_t n) {
    if (n > Left()) return false;
    p_ += n;
    return true;
  }
  // An n-byte big-endian unsigned integer.
  bool Be(size_t n, uint64_t* v) {
    if (n > Left()) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i) x = (x << 8) | p_[i];
    p_ += n;
    *v = x;
    return true;
  }

  const uint8_t* p_;
  const uint8_t* const end_;
};

// Decodes the header's msgpack map: exactly what ToJson writes, keys in any order; unknown keys
// are skipped whatever their value.
Result<ObjectMeta> DecodeMeta(const char* p, size_t len) {
  auto damaged = [](const std::string& what) { return Status::Corruption("object metadata is damaged: " + what); };
  enum : uint32_t {
    kName = 1 << 0, kSize = 1 << 1, kVersion = 1 << 2, kCksumType = 1 << 3, kCksumValue = 1 << 4,
    kAtime = 1 << 5, kCustom = 1 << 6, kUpload = 1 << 7, kChunks = 1 << 8,
  };
  ObjectMeta m;
  Msgpack in(p, len);
  uint32_t seen = 0;
  auto str = [&](std::string* out, uint32_t bit) {
    std::string_view v;
    if (!in.Str(&v)) return false;
    out->assign(v);
    seen |= bit;
    return true;
  };
  auto uint = [&](uint64_t* out, uint32_t bit) {
    if (!in.Uint(out)) return false;
    seen |= bit;
    return true;
  };
  auto custom = [&] {  // [[key, value], ...]
    uint64_t n = 0, two = 0;
    if (!in.Array(&n)) return false;
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view k, v;
      if (!in.Array(&two) || two != 2 || !in.Str(&k) || !in.Str(&v)) return false;
      m.custom.emplace_back(std::string(k), std::string(v));
    }
    seen |= kCustom;
    return true;
  };
  auto chunks = [&] {  // [size, ...]
    uint64_t n = 0, size = 0;
    if (!in.Array(&n)) return false;
    for (uint64_t i = 0; i < n; ++i) {
      if (!in.Uint(&size)) return false;
      m.chunk_sizes.push_back(size);
    }
    seen |= kChunks;
    return true;
  };
  uint64_t fields = 0;
  if (!in.Map(&fields)) return damaged("not a map");
  for (uint64_t f = 0; f < fields; ++f) {
    std::string_view key;
    if (!in.Str(&key)) return damaged("a key is not a string");
    bool ok = false;
    if (key == "n") {
      ok = str(&m.name, kName);
    } else if (key == "s") {
      ok = uint(&m.size, kSize);
    } else if (key == "v") {
      ok = uint(&m.version, kVersion);
    } else if (key == "ct") {
      ok = str(&m.cksum_type, kCksumType);
    } else if (key == "cv") {
      ok = str(&m.cksum_value, kCksumValue);
    } else if (key == "a") {
      ok = in.Int(&m.atime_ns);
      seen |= kAtime;
    } else if (key == "md") {
      ok = custom();
    } else if (key == "u") {
      ok = str(&m.upload_id, kUpload);
    } else if (key == "cs") {
      ok = chunks();
    } else {
      ok = in.Skip();
    }
    if (!ok) return damaged("bad value of \"" + std::string(key) + "\"");
  }
  if (!in.done()) return damaged("bytes after the map");
  constexpr uint32_t kRequired = kName | kSize | kVersion | kCksumType | kCksumValue | kAtime | kCustom;
  if ((seen & kRequired) != kRequired) return damaged("a field is missing");
  if ((seen & kUpload) && !(seen & kChunks)) return damaged("chunked without chunk sizes");
  return m;
}
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
  size_t got = 0;
  return ReadObjectHeader(fd, data_offset, {}, &got);
}

Result<ObjectMeta> ReadObjectHeader(int fd, uint64_t* data_offset, std::span<char> ahead, size_t* got) {
  // Enough for the metadata of most objects (name, checksum, a few custom keys: ~200 bytes);
  // longer metadata takes a second read. Not the whole 4 KiB block unless the object's bytes
  // are wanted too: GetBatch opens an object per item, and copying the block's unused rest was
  // a fifth of the bytes it read for 10 KiB objects (still less than a second read costs).
  char buf[1024];
  char rest[kDataAlign - sizeof(buf)];  // the rest of the first block, read only to reach the data
  iovec iov[3];
  iov[0] = iovec{buf, sizeof(buf)};
  iov[1] = iovec{rest, sizeof(rest)};
  iov[2] = iovec{ahead.data(), ahead.size()};
  *got = 0;
  ssize_t n = ::preadv(fd, iov, ahead.empty() ? 1 : 3, 0);
  if (n < static_cast<ssize_t>(kObjHeaderSize) || std::memcmp(buf, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("object header is missing or damaged");
  }
  uint32_t meta_len = GetU32(buf + 8);
  *data_offset = GetU32(buf + 12);
  Result<ObjectMeta> meta = Status::OK();
  if (kObjHeaderSize + meta_len <= std::min<size_t>(static_cast<size_t>(n), sizeof(buf))) {
    meta = DecodeMeta(buf + kObjHeaderSize, meta_len);
  } else {
    // Trust the length only as far as the file goes: a damaged one must not allocate up to 4 GiB.
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "fstat");
    if (kObjHeaderSize + uint64_t{meta_len} > static_cast<uint64_t>(st.st_size)) {
      return Status::Corruption("object header is truncated");
    }
    std::string packed(meta_len, '\0');
    AIS_RETURN_IF_ERROR(PreadAll(fd, packed.data(), meta_len, kObjHeaderSize));
    meta = DecodeMeta(packed.data(), packed.size());
  }
  if (meta.ok() && *data_offset == kDataAlign && !meta->chunked() && n > static_cast<ssize_t>(kDataAlign)) {
    *got = std::min<uint64_t>(static_cast<uint64_t>(n) - kDataAlign, meta->size);
  }
  return meta;
}

}  // namespace ais
