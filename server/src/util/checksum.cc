#include "util/checksum.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <cstdio>

namespace ais {
namespace {

class XxhashChecksummer final : public Checksummer {
 public:
  XxhashChecksummer() : state_(XXH64_createState()) { XXH64_reset(state_, 0); }
  ~XxhashChecksummer() override { XXH64_freeState(state_); }
  void Update(const void* data, size_t len) override { XXH64_update(state_, data, len); }
  std::string FinishHex() override {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(XXH64_digest(state_)));
    return buf;
  }

 private:
  XXH64_state_t* state_;
};

class EvpChecksummer final : public Checksummer {
 public:
  explicit EvpChecksummer(const EVP_MD* md) : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, md, nullptr); }
  ~EvpChecksummer() override { EVP_MD_CTX_free(ctx_); }
  void Update(const void* data, size_t len) override { EVP_DigestUpdate(ctx_, data, len); }
  std::string FinishHex() override {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, digest, &n);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(n * 2);
    for (unsigned i = 0; i < n; ++i) {
      out.push_back(kHex[digest[i] >> 4]);
      out.push_back(kHex[digest[i] & 0xf]);
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace

bool Checksummer::IsSupportedType(std::string_view type) {
  return type == "none" || type == "xxhash" || type == "xxhash2" || type == "md5" || type == "sha256" ||
         type == "sha512";
}

bool Checksummer::SameDigest(std::string_view a, std::string_view b) {
  auto canonical = [](std::string_view t) { return t == "xxhash2" ? std::string_view("xxhash") : t; };
  return canonical(a) == canonical(b);
}

Result<std::unique_ptr<Checksummer>> Checksummer::Create(std::string_view type) {
  std::unique_ptr<Checksummer> c;
  if (type == "xxhash" || type == "xxhash2") {
    c = std::make_unique<XxhashChecksummer>();
  } else if (type == "md5") {
    c = std::make_unique<EvpChecksummer>(EVP_md5());
  } else if (type == "sha256") {
    c = std::make_unique<EvpChecksummer>(EVP_sha256());
  } else if (type == "sha512") {
    c = std::make_unique<EvpChecksummer>(EVP_sha512());
  } else if (type != "none") {
    return Status::InvalidArgument("unsupported checksum type \"" + std::string(type) + "\"");
  }
  return c;
}

}  // namespace ais
