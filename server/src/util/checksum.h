// Streaming object checksums in the AIS flavours (cmn/cos/cksum.go): type string + lowercase hex value.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

class Checksummer {
 public:
  virtual ~Checksummer() = default;
  virtual void Update(const void* data, size_t len) = 0;
  // REQUIRES: called once; the object is spent afterwards.
  virtual std::string FinishHex() = 0;

  // "xxhash2" (AIS 5.0's default), "xxhash", "md5", "sha256", "sha512"; "none" yields nullptr.
  // Unknown or unsupported types are kInvalidArgument.
  static Result<std::unique_ptr<Checksummer>> Create(std::string_view type);
  static bool IsSupportedType(std::string_view type);
  // True when both names give the same digest: "xxhash" and "xxhash2" are two Go implementations
  // of XXH64 seed 0, so a value of one type validates against the other.
  static bool SameDigest(std::string_view a, std::string_view b);
};

}  // namespace ais
