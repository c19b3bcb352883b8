#include "s3/checksums.h"

#include <isa-l/crc.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <array>
#include <vector>

#include "util/strings.h"

namespace ais::s3 {
namespace {

std::string BigEndian(uint64_t v, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

class Crc32Hasher final : public BodyHasher {
 public:
  void Update(const void* data, size_t len) override {
    // zlib takes a uInt length: feed at most 1 GiB at a time.
    auto* p = static_cast<const Bytef*>(data);
    while (len > 0) {
      uInt n = static_cast<uInt>(std::min<size_t>(len, 1u << 30));
      crc_ = crc32(crc_, p, n);
      p += n;
      len -= n;
    }
  }
  std::string Finish() override { return BigEndian(crc_, 4); }

 private:
  uLong crc_ = crc32(0, nullptr, 0);
};

class Crc32cHasher final : public BodyHasher {
 public:
  void Update(const void* data, size_t len) override {
    auto* p = static_cast<unsigned char*>(const_cast<void*>(data));  // isa-l's API is not const-correct
    while (len > 0) {
      int n = static_cast<int>(std::min<size_t>(len, 1u << 30));
      crc_ = crc32_iscsi(p, n, crc_);
      p += n;
      len -= static_cast<size_t>(n);
    }
  }
  std::string Finish() override { return BigEndian(~crc_ & 0xffffffffu, 4); }

 private:
  unsigned int crc_ = 0xffffffffu;  // isa-l: init and result are not inverted
};

class Crc64NvmeHasher final : public BodyHasher {
 public:
  void Update(const void* data, size_t len) override { crc_ = Crc64Nvme(crc_, data, len); }
  std::string Finish() override { return BigEndian(crc_, 8); }

 private:
  uint64_t crc_ = 0;
};

class EvpHasher final : public BodyHasher {
 public:
  explicit EvpHasher(const EVP_MD* md) : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, md, nullptr); }
  ~EvpHasher() override { EVP_MD_CTX_free(ctx_); }
  EvpHasher(const EvpHasher&) = delete;
  EvpHasher& operator=(const EvpHasher&) = delete;
  void Update(const void* data, size_t len) override { EVP_DigestUpdate(ctx_, data, len); }
  std::string Finish() override {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, digest, &n);
    return std::string(reinterpret_cast<const char*>(digest), n);
  }

 private:
  EVP_MD_CTX* ctx_;
};

constexpr std::array<uint64_t, 256> MakeCrc64Table() {
  std::array<uint64_t, 256> t{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x9a6c9329ac4bc9b5ULL : c >> 1;  // 0xad93d23594c93659 reflected
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint64_t, 256> kCrc64Table = MakeCrc64Table();

}  // namespace

std::optional<ChecksumAlgo> ParseChecksumAlgo(std::string_view name) {
  std::string n;
  for (char c : name) n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (n.starts_with("x-amz-checksum-")) n.erase(0, 15);
  if (n == "crc32") return ChecksumAlgo::kCrc32;
  if (n == "crc32c") return ChecksumAlgo::kCrc32c;
  if (n == "crc64nvme") return ChecksumAlgo::kCrc64Nvme;
  if (n == "sha1") return ChecksumAlgo::kSha1;
  if (n == "sha256") return ChecksumAlgo::kSha256;
  return std::nullopt;
}

std::string_view ChecksumName(ChecksumAlgo algo) {
  switch (algo) {
    case ChecksumAlgo::kCrc32: return "crc32";
    case ChecksumAlgo::kCrc32c: return "crc32c";
    case ChecksumAlgo::kCrc64Nvme: return "crc64nvme";
    case ChecksumAlgo::kSha1: return "sha1";
    case ChecksumAlgo::kSha256: return "sha256";
  }
  return "";
}

std::unique_ptr<BodyHasher> BodyHasher::Create(ChecksumAlgo algo) {
  switch (algo) {
    case ChecksumAlgo::kCrc32: return std::make_unique<Crc32Hasher>();
    case ChecksumAlgo::kCrc32c: return std::make_unique<Crc32cHasher>();
    case ChecksumAlgo::kCrc64Nvme: return std::make_unique<Crc64NvmeHasher>();
    case ChecksumAlgo::kSha1: return std::make_unique<EvpHasher>(EVP_sha1());
    case ChecksumAlgo::kSha256: return std::make_unique<EvpHasher>(EVP_sha256());
  }
  return nullptr;
}

std::unique_ptr<BodyHasher> BodyHasher::Md5() { return std::make_unique<EvpHasher>(EVP_md5()); }

uint64_t Crc64Nvme(uint64_t crc, const void* data, size_t len) {
  auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) crc = kCrc64Table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::string HexOf(std::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

std::string MultipartEtag(const std::vector<std::string>& part_md5_hex) {
  auto md5 = BodyHasher::Md5();
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (const std::string& hex : part_md5_hex) {
    if (hex.size() != 32) return "";
    unsigned char raw[16];
    for (size_t i = 0; i < 16; ++i) {
      int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) return "";
      raw[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    md5->Update(raw, sizeof(raw));
  }
  return HexOf(md5->Finish()) + "-" + std::to_string(part_md5_hex.size());
}

}  // namespace ais::s3
