// LibarchiveWriter: the compressed tar formats (.tgz/.tar.gz: gzip level 1; .tar.lz4: one LZ4
// frame of 256 KiB blocks, no checksums) and .zip (stored, data descriptors), via libarchive.
// Tar entries are USTAR, PAX only when a name or size needs it.
#pragma once

#include <sys/types.h>

#include "archive/archive_writer.h"

struct archive;

namespace ais {

class LibarchiveWriter : public ArchiveWriter {
 public:
  static Result<std::unique_ptr<ArchiveWriter>> Create(ArchiveFormat format, OutputSink* sink);
  ~LibarchiveWriter() override;

  Status BeginEntry(std::string_view name, uint64_t size, int64_t mtime_sec) override;
  Status Write(const void* data, size_t len) override;
  Status WriteFile(const std::vector<FileSegment>& segments, std::shared_ptr<const void> owner) override;
  Status EndEntry() override;
  Status Finish() override;

 private:
  explicit LibarchiveWriter(OutputSink* sink) : sink_(sink) {}
  Status Check(int rc, const char* what);
  static ssize_t WriteCb(struct archive*, void* self, const void* buf, size_t len);

  OutputSink* sink_;
  struct archive* a_ = nullptr;
  Status sink_status_;     // why the sink refused bytes, if it did
  bool discard_ = false;   // set on destruction: an unfinished archive gets no trailer
  uint64_t size_ = 0;
  uint64_t written_ = 0;
};

}  // namespace ais
