#include "archive/file_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace ais {
namespace {

constexpr size_t kBuffer = 1 << 20;

}  // namespace

Result<std::unique_ptr<FileSpool>> FileSpool::Create(const std::string& dir) {
  std::unique_ptr<FileSpool> s(new FileSpool());
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    // No O_TMPFILE on this filesystem: a named temp file, unlinked at once.
    std::string templ = dir + "/getbatch.XXXXXX";
    fd = ::mkostemp(templ.data(), O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, "create spool file in " + dir);
    ::unlink(templ.c_str());
  }
  s->fd_.reset(fd);
  s->buf_.reserve(kBuffer);
  return s;
}

Status FileSpool::Flush() {
  if (buf_.empty()) return Status::OK();
  Status st = WriteAll(fd_.get(), buf_.data(), buf_.size());
  buf_.clear();
  return st;
}

Status FileSpool::Append(const void* data, size_t len) {
  size_ += len;
  if (buf_.size() + len > kBuffer) {
    AIS_RETURN_IF_ERROR(Flush());
    if (len >= kBuffer) return WriteAll(fd_.get(), data, len);
  }
  buf_.append(static_cast<const char*>(data), len);
  return Status::OK();
}

Status FileSpool::AppendFile(const FileSegment& seg, std::shared_ptr<const void>) {
  AIS_RETURN_IF_ERROR(Flush());
  auto off = static_cast<loff_t>(seg.offset);
  uint64_t left = seg.len;
  while (left > 0) {
    ssize_t n = ::copy_file_range(seg.fd, &off, fd_.get(), nullptr, left, 0);
    if (n > 0) {
      left -= static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Status::Corruption("object file is shorter than its metadata says");
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
      return Status::FromErrno(errno, "copy into spool file");
    }
    // No in-kernel copy between these files: through a buffer.
    std::vector<char> tmp(static_cast<size_t>(std::min<uint64_t>(left, kBuffer)));
    const FileSegment rest{seg.fd, static_cast<uint64_t>(off), left};
    AIS_RETURN_IF_ERROR(
        StreamSegments({rest}, tmp, [this](const char* p, size_t k) { return WriteAll(fd_.get(), p, k); }));
    break;
  }
  size_ += seg.len;
  return Status::OK();
}

}  // namespace ais
