#include "util/file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>

namespace ais {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

UniqueFd::~UniqueFd() { reset(); }

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<UniqueFd> OpenFile(const std::string& path, int flags, int mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  return UniqueFd(fd);
}

Result<UniqueFd> OpenBeneath(int dir_fd, const std::string& rel, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dir_fd, rel.c_str(), &how, sizeof(how));
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));  // EAGAIN: a rename raced the lookup
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  if (errno == ELOOP || errno == EXDEV) {
    return Status::InvalidArgument("\"" + rel + "\": a symbolic link or a path outside the allowed directory");
  }
  if (errno == ENOSYS) return Status::NotSupported("open \"" + rel + "\": openat2 needs Linux 5.6 or later");
  return Status::FromErrno(errno, "open " + rel);
}

Status WriteAll(int fd, const void* data, size_t len) {
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "write");
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::OK();
}

Status PwriteAll(int fd, const void* data, size_t len, uint64_t offset) {
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::pwrite(fd, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pwrite");
    }
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status PwritevAll(int fd, std::string_view a, std::string_view b, uint64_t offset) {
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  ssize_t n;
  do {
    n = ::pwritev(fd, iov, 2, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::FromErrno(errno, "pwritev");
  auto done = static_cast<size_t>(n);
  if (done == a.size() + b.size()) return Status::OK();
  // A short write (a full disk reports itself on the retry): the rest one piece at a time.
  if (done < a.size()) {
    AIS_RETURN_IF_ERROR(PwriteAll(fd, a.data() + done, a.size() - done, offset + done));
    done = a.size();
  }
  size_t in_b = done - a.size();
  return PwriteAll(fd, b.data() + in_b, b.size() - in_b, offset + a.size() + in_b);
}

Status PreadAll(int fd, void* data, size_t len, uint64_t offset) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = ::pread(fd, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pread");
    }
    if (n == 0) return Status::Corruption("unexpected end of file");
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status FsyncFd(int fd, const std::string& what) {
  if (::fdatasync(fd) != 0) return Status::FromErrno(errno, "fsync " + what);
  return Status::OK();
}

Status FsyncDir(const std::string& dir) {
  auto fd = OpenFile(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  if (::fsync(fd->get()) != 0) return Status::FromErrno(errno, "fsync " + dir);
  return Status::OK();
}

Status MkdirAll(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::FromErrno(ec.value(), "mkdir " + dir);
  return Status::OK();
}

Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec && ec.value() != ENOENT) return Status::FromErrno(ec.value(), "remove " + path);
  return Status::OK();
}

Status AtomicWriteFile(const std::string& path, std::string_view content, bool sync) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string tmp = path + ".tmp." + std::to_string(rng());
  auto fd = OpenFile(tmp, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.status();
  Status st = WriteAll(fd->get(), content.data(), content.size());
  if (st.ok() && sync) st = FsyncFd(fd->get(), tmp);
  fd->reset();
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = Status::FromErrno(errno, "rename " + tmp);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return sync ? FsyncDir(DirName(path)) : Status::OK();
}

Result<std::string> ReadFile(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  AIS_RETURN_IF_ERROR(PreadAll(fd->get(), out.data(), out.size(), 0));
  return out;
}

std::string DirName(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

}  // namespace ais
