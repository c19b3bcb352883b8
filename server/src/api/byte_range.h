// Single byte-range parsing for GET (AIS ais/utils.go parseMultiRange semantics, single range only).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "util/status.h"

namespace ais {

struct ByteRange {
  uint64_t start = 0;
  uint64_t length = 0;
};

// `header`: the Range header value; `size`: object size. Unsatisfiable or malformed ranges are
// kRangeNotSatisfiable (416), as AIS answers them.
Result<ByteRange> ParseByteRange(std::string_view header, uint64_t size);

}  // namespace ais
