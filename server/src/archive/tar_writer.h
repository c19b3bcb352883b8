// TarWriter: a plain tar stream written directly (headers from tar_header.h) so that entry bytes
// held in files reach the sink as file segments and leave the server by sendfile, uncopied.
// The compressed formats go through LibarchiveWriter.
#pragma once

#include "archive/archive_writer.h"

namespace ais {

class TarWriter : public ArchiveWriter {
 public:
  explicit TarWriter(OutputSink* sink) : sink_(sink) {}

  Status BeginEntry(std::string_view name, uint64_t size, int64_t mtime_sec) override;
  Status Write(const void* data, size_t len) override;
  Status WriteFile(const std::vector<FileSegment>& segments, std::shared_ptr<const void> owner) override;
  Status EndEntry() override;
  Status Finish() override;
  // Header, data and padding in one AppendParts.
  Status WriteEntry(std::string_view name, std::string_view data, int64_t mtime_sec) override;
  // One header block and zero padding written into `buf` around the bytes, which then goes to
  // the sink as it is (names that need a PAX header take WriteEntry).
  Status WriteEntryInPlace(std::string_view name, ByteBuffer buf, uint64_t size, int64_t mtime_sec) override;

 private:
  OutputSink* sink_;
  uint64_t size_ = 0;     // declared size of the current entry
  uint64_t written_ = 0;  // bytes written to it so far
};

}  // namespace ais
