#include "util/file_segment.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

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

Result<size_t> SegmentReader::Read(char* buf, size_t len) {
  while (index_ < segments_.size() && done_ == segments_[index_].len) {
    ++index_;
    done_ = 0;
  }
  if (index_ == segments_.size() || len == 0) return size_t{0};
  const FileSegment& seg = segments_[index_];
  const size_t want = static_cast<size_t>(std::min<uint64_t>(len, seg.len - done_));
  for (;;) {
    ssize_t n = ::pread(seg.fd, buf, want, static_cast<off_t>(seg.offset + done_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "reading object bytes");
    if (n == 0) return Status::IOError("object file shorter than expected");
    done_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
}

}  // namespace ais
