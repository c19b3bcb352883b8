// OutputSink: where an ArchiveWriter puts its bytes. Implementations are bounded: Append blocks
// while the consumer is behind and fails once the consumer is gone, so a writer never holds more
// than the sink allows.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "util/file_segment.h"
#include "util/byte_buffer.h"
#include "util/status.h"

namespace ais {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Copies [data, data+len).
  virtual Status Append(const void* data, size_t len) = 0;
  // Copies the parts in order, as one step where the sink can (e.g. under one lock).
  virtual Status AppendParts(const std::string_view* parts, size_t n) {
    for (size_t i = 0; i < n; ++i) AIS_RETURN_IF_ERROR(Append(parts[i].data(), parts[i].size()));
    return Status::OK();
  }
  // Bytes the sink may keep as they are instead of copying them.
  virtual Status AppendOwned(ByteBuffer bytes) { return Append(bytes.data(), bytes.size()); }
  // File bytes that may travel without a copy (sendfile). `owner` keeps `seg.fd` open until the
  // bytes are gone; the sink may hold it past this call.
  virtual Status AppendFile(const FileSegment& seg, std::shared_ptr<const void> owner) = 0;
};

}  // namespace ais
