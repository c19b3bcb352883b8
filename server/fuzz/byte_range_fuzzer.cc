// The input is a Range header value, parsed against objects of several sizes (empty, tiny, around
// 2^32 and 2^63, the largest) by ParseByteRange (api/byte_range.h).
//
// Properties: an accepted range is non-empty and lies inside the object; a refusal is 416; the
// range written back as "bytes=<first>-<last>" (and as a suffix "bytes=-<n>" when it ends the
// object) parses to the same range.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "api/byte_range.h"
#include "fuzz_check.h"

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kSizes[] = {0, 1, 2, 10, 4096, (1ULL << 32) + 1, 1ULL << 63, kMax - 1, kMax};

bool Same(const ais::Result<ais::ByteRange>& r, const ais::ByteRange& want) {
  return r.ok() && r.value().start == want.start && r.value().length == want.length;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view header(reinterpret_cast<const char*>(data), size);
  for (uint64_t object_size : kSizes) {
    auto r = ais::ParseByteRange(header, object_size);
    if (!r.ok()) {
      FUZZ_CHECK(r.status().code() == ais::Status::Code::kRangeNotSatisfiable);
      continue;
    }
    const ais::ByteRange& br = r.value();
    FUZZ_CHECK(br.length > 0);
    FUZZ_CHECK(br.start < object_size);
    FUZZ_CHECK(br.length <= object_size - br.start);
    uint64_t last = br.start + br.length - 1;
    FUZZ_CHECK(Same(ais::ParseByteRange("bytes=" + std::to_string(br.start) + "-" + std::to_string(last), object_size), br));
    if (last == object_size - 1) {
      FUZZ_CHECK(Same(ais::ParseByteRange("bytes=" + std::to_string(br.start) + "-", object_size), br));
      FUZZ_CHECK(Same(ais::ParseByteRange("bytes=-" + std::to_string(br.length), object_size), br));
    }
  }
  return 0;
}
