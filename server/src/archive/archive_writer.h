// ArchiveWriter: writes a GetBatch output archive entry by entry into an OutputSink.
//
// Usage: for each entry BeginEntry(name, size, mtime), exactly `size` bytes through Write and/or
// WriteFile, EndEntry(); then Finish() once for the end-of-archive trailer. A writer that is
// destroyed unfinished writes nothing more (a failed batch ends without a trailer).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "archive/archive_format.h"
#include "archive/output_sink.h"
#include "util/file_segment.h"
#include "util/byte_buffer.h"
#include "util/status.h"

namespace ais {

class ArchiveWriter {
 public:
  // A writer of `format` into `sink`. The sink must outlive the writer.
  static Result<std::unique_ptr<ArchiveWriter>> Create(ArchiveFormat format, OutputSink* sink);
  virtual ~ArchiveWriter() = default;

  // REQUIRES: the previous entry ended.
  virtual Status BeginEntry(std::string_view name, uint64_t size, int64_t mtime_sec) = 0;
  virtual Status Write(const void* data, size_t len) = 0;
  // Entry bytes that are in files; `owner` keeps the fds open. Writers that can pass them on
  // without a copy (plain tar) do.
  virtual Status WriteFile(const std::vector<FileSegment>& segments, std::shared_ptr<const void> owner) = 0;
  // kCorruption if the entry got other than its declared size.
  virtual Status EndEntry() = 0;
  virtual Status Finish() = 0;

  // A whole entry held in memory. Writers that can hand it to the sink in one step do.
  virtual Status WriteEntry(std::string_view name, std::string_view data, int64_t mtime_sec) {
    AIS_RETURN_IF_ERROR(BeginEntry(name, data.size(), mtime_sec));
    AIS_RETURN_IF_ERROR(Write(data.data(), data.size()));
    return EndEntry();
  }

  // Room a buffer for WriteEntryInPlace keeps before the entry's bytes, and its whole size.
  static constexpr size_t kInPlaceHead = 512;
  static size_t InPlaceSize(uint64_t size) { return kInPlaceHead + size + (512 - size % 512) % 512; }
  // WriteEntry of the `size` bytes at buf[kInPlaceHead, kInPlaceHead + size): writers that can
  // put their framing around the bytes in the buffer itself and hand the buffer on (plain tar)
  // do, and copy nothing. REQUIRES: buf.size() == InPlaceSize(size).
  virtual Status WriteEntryInPlace(std::string_view name, ByteBuffer buf, uint64_t size, int64_t mtime_sec) {
    return WriteEntry(name, std::string_view(buf.data() + kInPlaceHead, size), mtime_sec);
  }
};

}  // namespace ais
