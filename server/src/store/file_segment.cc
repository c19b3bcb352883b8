#include "store/file_segment.h"

#include <algorithm>

#include "util/file.h"

namespace ais {

Status ReadSegments(const std::vector<FileSegment>& segments, char* out) {
  for (const auto& s : segments) {
    AIS_RETURN_IF_ERROR(PreadAll(s.fd, out, s.len, s.offset));
    out += s.len;
  }
  return Status::OK();
}

Status StreamSegments(const std::vector<FileSegment>& segments, std::span<char> buf,
                      const std::function<Status(const char*, size_t)>& fn) {
  for (const auto& s : segments) {
    for (uint64_t off = 0; off < s.len;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), s.len - off));
      AIS_RETURN_IF_ERROR(PreadAll(s.fd, buf.data(), n, s.offset + off));
      AIS_RETURN_IF_ERROR(fn(buf.data(), n));
      off += n;
    }
  }
  return Status::OK();
}

}  // namespace ais
