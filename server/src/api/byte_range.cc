#include "api/byte_range.h"

#include <string>

#include "util/strings.h"

namespace ais {

Result<ByteRange> ParseByteRange(std::string_view header, uint64_t size) {
  auto bad = [&](const std::string& why) {
    return Status::RangeNotSatisfiable("invalid range \"" + std::string(header) + "\": " + why);
  };
  constexpr std::string_view kPrefix = "bytes=";
  if (!header.starts_with(kPrefix)) return bad("must start with \"bytes=\"");
  std::string_view spec = header.substr(kPrefix.size());
  if (spec.find(',') != std::string_view::npos) {
    return Status::RangeNotSatisfiable("multi-range read not supported: \"" + std::string(header) + "\"");
  }
  while (!spec.empty() && spec.front() == ' ') spec.remove_prefix(1);
  while (!spec.empty() && spec.back() == ' ') spec.remove_suffix(1);
  auto dash = spec.find('-');
  if (dash == std::string_view::npos) return bad("missing '-'");
  std::string_view first = spec.substr(0, dash), last = spec.substr(dash + 1);
  if (first.empty()) {  // suffix range: the last N bytes
    auto n = ParseUint(last);
    if (!n) return bad("malformed suffix length");
    if (*n == 0 || size == 0) return bad("unsatisfiable range");
    uint64_t len = std::min(*n, size);
    return ByteRange{size - len, len};
  }
  auto start = ParseUint(first);
  if (!start) return bad("malformed start");
  if (*start >= size) return bad("start is beyond the end of the object (size " + std::to_string(size) + ")");
  uint64_t end = size - 1;
  if (!last.empty()) {
    auto e = ParseUint(last);
    if (!e) return bad("malformed end");
    if (*e < *start) return bad("end precedes start");
    end = std::min(*e, size - 1);
  }
  return ByteRange{*start, end - *start + 1};
}

}  // namespace ais
