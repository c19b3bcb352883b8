// FileSpool: an OutputSink into an unlinked temporary file, for replies that can only be sent
// once the whole archive exists (GetBatch multipart: the per-item metadata goes first). Memory
// stays at one write buffer whatever the archive's size; the file vanishes when the spool is
// destroyed (or the process dies).
#pragma once

#include <memory>
#include <string>

#include "archive/output_sink.h"
#include "util/file.h"

namespace ais {

class FileSpool : public OutputSink {
 public:
  // A spool in directory `dir`.
  static Result<std::unique_ptr<FileSpool>> Create(const std::string& dir);

  Status Append(const void* data, size_t len) override;
  Status AppendFile(const FileSegment& seg, std::shared_ptr<const void> owner) override;
  // Writes out what is buffered. REQUIRES: called after the last Append, before reading fd().
  Status Flush();

  int fd() const { return fd_.get(); }
  uint64_t size() const { return size_; }

 private:
  FileSpool() = default;

  UniqueFd fd_;
  std::string buf_;
  uint64_t size_ = 0;  // bytes appended (flushed or buffered)
};

}  // namespace ais
