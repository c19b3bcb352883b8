#include "store/object_meta.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <msgpack.hpp>

#include "util/file.h"
#include "util/msgpack_sink.h"

namespace ais {

void MergeCustomInto(std::vector<std::pair<std::string, std::string>>* custom,
                     const std::vector<std::pair<std::string, std::string>>& md) {
  for (const auto& entry : md) {  // (no structured binding: clang 14 cannot capture one)
    auto it = std::find_if(custom->begin(), custom->end(), [&](const auto& kv) { return kv.first == entry.first; });
    if (it != custom->end()) it->second = entry.second;
    else custom->push_back(entry);
  }
  std::sort(custom->begin(), custom->end());
}

namespace {

constexpr char kMagic[8] = {'A', 'I', 'S', 'O', 'B', 'J', '0', '1'};
// Room for the fields that change after the header is sized: checksum (<=128 hex), size, version.
constexpr uint64_t kLateFieldsSlack = 256;

// The header's msgpack map. Keys in sorted order and every number in its shortest form, as the
// files written so far have them (MetaVisitor takes any order).
std::string PackMeta(const ObjectMeta& m) {
  std::string out;
  out.reserve(96 + m.name.size() + m.cksum_value.size());
  MsgpackStringSink sink{&out};
  msgpack::packer<MsgpackStringSink> pk(sink);
  auto str = [&pk](std::string_view s) {
    pk.pack_str(static_cast<uint32_t>(s.size())).pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
  };
  auto key = str;
  pk.pack_map(m.chunked() ? 9 : 7);
  key("a");
  pk.pack_int64(m.atime_ns);
  if (m.chunked()) {
    key("cs");
    pk.pack_array(static_cast<uint32_t>(m.chunk_sizes.size()));
    for (uint64_t s : m.chunk_sizes) pk.pack_uint64(s);
  }
  key("ct");
  str(m.cksum_type);
  key("cv");
  str(m.cksum_value);
  key("md");
  pk.pack_array(static_cast<uint32_t>(m.custom.size()));
  for (const auto& [k, v] : m.custom) {
    pk.pack_array(2);
    str(k);
    str(v);
  }
  key("n");
  str(m.name);
  key("s");
  pk.pack_uint64(m.size);
  if (m.chunked()) {
    key("u");
    str(m.upload_id);
  }
  key("v");
  pk.pack_uint64(m.version);
  return out;
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

// The header map's keys (PackMeta).
enum Field : uint32_t { kOther, kName, kSize, kVersion, kCksumType, kCksumValue, kAtime, kCustom, kUpload, kChunks };
constexpr uint32_t Bit(Field f) { return 1u << f; }

Field FieldOf(std::string_view k) {
  if (k == "n") return kName;
  if (k == "s") return kSize;
  if (k == "v") return kVersion;
  if (k == "ct") return kCksumType;
  if (k == "cv") return kCksumValue;
  if (k == "a") return kAtime;
  if (k == "md") return kCustom;
  if (k == "u") return kUpload;
  if (k == "cs") return kChunks;
  return kOther;
}

// Fills an ObjectMeta as msgpack-cxx's parser walks the header's map. Its visitor API hands
// strings as views into the header, so only the fields kept are allocated (GetBatch decodes a
// header per item). Accepts exactly what PackMeta writes, in any key order; unknown keys are
// skipped whatever their value. Any callback returning false stops the parse.
class MetaVisitor : public msgpack::null_visitor {
 public:
  explicit MetaVisitor(ObjectMeta* m) : m_(m) {}

  bool visit_nil() { return Scalar(); }
  bool visit_boolean(bool) { return Scalar(); }
  bool visit_float32(float) { return Scalar(); }
  bool visit_float64(double) { return Scalar(); }
  bool visit_bin(const char*, uint32_t) { return Scalar(); }
  bool visit_ext(const char*, uint32_t) { return Scalar(); }
  bool visit_negative_integer(int64_t v) {
    if (Skipping()) return Scalar();
    if (field_ == kAtime) return Set(kAtime, [&] { m_->atime_ns = v; });
    return false;
  }
  bool visit_positive_integer(uint64_t v) {
    if (Skipping()) return Scalar();
    switch (field_) {
      case kSize: return Set(kSize, [&] { m_->size = v; });
      case kVersion: return Set(kVersion, [&] { m_->version = v; });
      case kAtime: return Set(kAtime, [&] { m_->atime_ns = static_cast<int64_t>(v); });
      case kChunks:
        if (depth_ != 2) return false;
        m_->chunk_sizes.push_back(v);
        return true;
      default: return false;
    }
  }
  bool visit_str(const char* p, uint32_t n) {
    std::string_view v(p, n);
    if (in_key_) {
      field_ = FieldOf(v);
      return true;
    }
    if (Skipping()) return Scalar();
    switch (field_) {
      case kName: return Set(kName, [&] { m_->name.assign(v); });
      case kCksumType: return Set(kCksumType, [&] { m_->cksum_type.assign(v); });
      case kCksumValue: return Set(kCksumValue, [&] { m_->cksum_value.assign(v); });
      case kUpload: return Set(kUpload, [&] { m_->upload_id.assign(v); });
      case kCustom:  // [key, value]
        if (depth_ != 3 || pair_fill_ >= 2) return false;
        (pair_fill_++ == 0 ? m_->custom.back().first : m_->custom.back().second).assign(v);
        return true;
      default: return false;
    }
  }
  bool start_map(uint32_t) {
    if (depth_ == 0) return ++depth_ == 1;  // the header's map
    return Nested();
  }
  bool start_map_key() {
    in_key_ = skip_ == 0;  // a key of the header's map: must be a string
    return true;
  }
  bool end_map_key() {
    if (skip_ == 0) in_key_ = false;
    return true;
  }
  bool end_map() { return EndNested(); }
  bool start_array(uint32_t) {
    if (Skipping()) return Nested();
    if (depth_ == 1 && (field_ == kCustom || field_ == kChunks)) {
      seen_ |= Bit(field_);
      ++depth_;
      return true;
    }
    if (depth_ == 2 && field_ == kCustom) {
      m_->custom.emplace_back();
      pair_fill_ = 0;
      ++depth_;
      return true;
    }
    return false;
  }
  bool end_array() {
    if (Skipping()) return EndNested();
    if (depth_ == 3 && pair_fill_ != 2) return false;
    --depth_;
    return true;
  }
  void parse_error(size_t, size_t) {}
  void insufficient_bytes(size_t, size_t) {}

  // After a complete parse: OK, or what is missing.
  Status Check() const {
    constexpr uint32_t kRequired = Bit(kName) | Bit(kSize) | Bit(kVersion) | Bit(kCksumType) |
                                   Bit(kCksumValue) | Bit(kAtime) | Bit(kCustom);
    if ((seen_ & kRequired) != kRequired) return Status::Corruption("object metadata is damaged: a field is missing");
    if ((seen_ & Bit(kUpload)) && !(seen_ & Bit(kChunks))) {
      return Status::Corruption("object metadata is damaged: chunked without chunk sizes");
    }
    // Chunk sizes belong to an upload: without one they name files nobody can find.
    if ((seen_ & Bit(kChunks)) && (!(seen_ & Bit(kUpload)) || m_->upload_id.empty())) {
      return Status::Corruption("object metadata is damaged: chunk sizes without an upload id");
    }
    return Status::OK();
  }

 private:
  // Inside an unknown key's value (or a key position, where only a string may come).
  bool Skipping() const { return skip_ > 0 || (field_ == kOther && depth_ == 1) || in_key_; }
  // A top-level value of field f. REQUIRES: not skipping.
  template <typename Fn>
  bool Set(Field f, Fn assign) {
    if (depth_ != 1) return false;
    assign();
    seen_ |= Bit(f);
    return true;
  }
  // A scalar that is no field's value is fine only inside an unknown key's value.
  bool Scalar() const { return !in_key_ && (skip_ > 0 || (field_ == kOther && depth_ == 1)); }
  bool Nested() {
    if (in_key_ || (skip_ == 0 && !(field_ == kOther && depth_ == 1))) return false;
    ++skip_;
    return true;
  }
  bool EndNested() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    --depth_;
    return depth_ == 0;  // only the header's map ends here
  }

  ObjectMeta* m_;
  int depth_ = 0;         // 1: the header's map; 2: md or cs; 3: an md pair
  int skip_ = 0;          // nesting inside an unknown key's value
  bool in_key_ = false;   // a key of the header's map comes next
  Field field_ = kOther;  // the key whose value comes next
  int pair_fill_ = 0;     // strings in the current md pair
  uint32_t seen_ = 0;     // Bit(field) of each field given
};

// Decodes the header's msgpack map: all of it, nothing after it.
Result<ObjectMeta> DecodeMeta(const char* p, size_t len) {
  ObjectMeta m;
  MetaVisitor visitor(&m);
  size_t off = 0;
  if (!msgpack::parse(p, len, off, visitor) || off != len) {
    return Status::Corruption("object metadata is damaged: not one msgpack map of known fields");
  }
  AIS_RETURN_IF_ERROR(visitor.Check());
  return m;
}
}  // namespace

uint64_t ObjectMeta::max_chunk_size() const {
  return chunk_sizes.empty() ? 0 : *std::max_element(chunk_sizes.begin(), chunk_sizes.end());
}

uint64_t ReservedDataOffset(const ObjectMeta& meta) {
  const std::string packed = PackMeta(meta);
  return AlignUp(kObjHeaderSize + packed.size() + kLateFieldsSlack);
}

std::string EncodeObjectHeader(const ObjectMeta& meta, bool inline_data, uint64_t* data_offset) {
  const std::string packed = PackMeta(meta);
  uint64_t header_len = kObjHeaderSize + packed.size();
  uint64_t offset = inline_data ? std::max<uint64_t>(*data_offset, AlignUp(header_len)) : 0;
  *data_offset = offset;
  std::string out(kObjHeaderSize, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutU32(out.data() + 8, static_cast<uint32_t>(packed.size()));
  PutU32(out.data() + 12, static_cast<uint32_t>(offset));
  out.append(packed);
  if (inline_data) out.resize(offset, '\0');
  return out;
}

std::string EncodeObjectMeta(const ObjectMeta& meta) { return PackMeta(meta); }

Result<ObjectMeta> DecodeObjectMeta(std::string_view packed) { return DecodeMeta(packed.data(), packed.size()); }

Status CheckObjectLayout(const ObjectMeta& meta, uint64_t data_offset, uint64_t file_size) {
  auto damaged = [&](const std::string& what) {
    return Status::Corruption("object " + meta.name + " is damaged: " + what);
  };
  if (!meta.chunked()) {
    if (data_offset < kDataAlign || data_offset % kDataAlign != 0) {
      return damaged("data offset " + std::to_string(data_offset) + " is not a 4 KiB boundary after the header");
    }
    if (file_size < data_offset || file_size - data_offset != meta.size) {
      return damaged("its file holds " + std::to_string(file_size < data_offset ? 0 : file_size - data_offset) +
                     " bytes of data, its header says " + std::to_string(meta.size));
    }
    return Status::OK();
  }
  if (data_offset != 0) return damaged("a chunked object with inline data");
  if (meta.upload_id.size() > 64 || !std::all_of(meta.upload_id.begin(), meta.upload_id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      })) {
    return damaged("upload id is not a plain name");
  }
  uint64_t sum = 0;
  for (uint64_t s : meta.chunk_sizes) {
    if (s > meta.size - sum) return damaged("chunk sizes add up to more than its size");
    sum += s;
  }
  if (sum != meta.size) {
    return damaged("chunk sizes add up to " + std::to_string(sum) + ", its size is " + std::to_string(meta.size));
  }
  return Status::OK();
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
