// Small POSIX file helpers: an owning fd, full reads/writes, directory sync, atomic replace.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

// Owns one file descriptor; closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

Result<UniqueFd> OpenFile(const std::string& path, int flags, int mode = 0644);
// Opens `rel` beneath the directory open at `dir_fd` (openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): a path that would leave the directory (an absolute one, "..") or that
// has a symlink anywhere on the way is refused (kInvalidArgument), however the tree changes
// meanwhile. `flags` as open(2)'s (O_CLOEXEC added).
Result<UniqueFd> OpenBeneath(int dir_fd, const std::string& rel, int flags);
Status WriteAll(int fd, const void* data, size_t len);
Status PwriteAll(int fd, const void* data, size_t len, uint64_t offset);
// `a` then `b` from `offset`, in one pwritev when the kernel takes it all.
Status PwritevAll(int fd, std::string_view a, std::string_view b, uint64_t offset);
// Reads exactly len bytes at offset; a short file is kCorruption.
Status PreadAll(int fd, void* data, size_t len, uint64_t offset);
Status FsyncFd(int fd, const std::string& what);
Status FsyncDir(const std::string& dir);
Status MkdirAll(const std::string& dir);
// rm -rf; a missing path is OK.
Status RemoveTree(const std::string& path);
// Writes content to path via temp file + (optional fsync) + rename: readers see old or new, never half.
Status AtomicWriteFile(const std::string& path, std::string_view content, bool sync);
Result<std::string> ReadFile(const std::string& path);
std::string DirName(const std::string& path);
// A stat's mtime in nanoseconds since the epoch.
inline int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace ais
