// A run of bytes of an open file: what an object read is sliced into (store/) and what a reply
// sends with sendfile (http/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "util/status.h"

namespace ais {

struct FileSegment {
  int fd;
  uint64_t offset;
  uint64_t len;
};

// The buffer through which object bytes are streamed when they are copied or hashed.
inline constexpr size_t kSegmentBuf = 1 << 20;

// Reads the segments, in order, into `out` (their total length). The one pread loop over
// segments: every read of object bytes into memory goes through it or StreamSegments.
Status ReadSegments(const std::vector<FileSegment>& segments, char* out);
// Reads the segments in order through `buf`, passing each piece (at most buf.size() bytes) to
// `fn`; stops at the first error. REQUIRES: !buf.empty().
Status StreamSegments(const std::vector<FileSegment>& segments, std::span<char> buf,
                      const std::function<Status(const char*, size_t)>& fn);

// The segments' bytes pulled in order, a buffer at a time (an upload body fed to a client library).
class SegmentReader {
 public:
  explicit SegmentReader(std::vector<FileSegment> segments) : segments_(std::move(segments)) {}
  // Fills `buf` with up to `len` next bytes; 0 at the end. kIOError on a read error or a file
  // shorter than its segment.
  Result<size_t> Read(char* buf, size_t len);

 private:
  std::vector<FileSegment> segments_;
  size_t index_ = 0;     // the segment being read
  uint64_t done_ = 0;    // bytes of it already read
};

}  // namespace ais
