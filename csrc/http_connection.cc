#include "http_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

namespace aisnative {
namespace {

using Clock = std::chrono::steady_clock;

// Longest single poll(): how late an interrupt (Ctrl-C) is noticed while nothing arrives.
constexpr int kSliceMs = 100;

// How long Recv keeps retrying a drained socket, in the middle of a reply, before it sleeps in
// poll(). A receiver that sleeps between the segments of a reply must be woken for each one by
// whoever delivers it (on loopback, the sending process; on a VM an inter-processor interrupt
// and an exit each time); a short spin spares the sender those wake-ups (figures in
// docs/parallel-download.md, "What bounds it"). A connection stops spinning while its replies'
// gaps prove longer (a sender busy producing them), so the spin costs little where it does not
// pay. AIS_RECV_SPIN_US overrides it (0: never spin).
Clock::duration RecvSpin() {
  static const Clock::duration spin = [] {
    long us = 50;
    if (const char* env = std::getenv("AIS_RECV_SPIN_US"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end == '\0' && v >= 0) us = v;
    }
    return std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(us));
  }();
  return spin;
}

error_code Errno(int err) { return error_code(err, boost::system::system_category()); }

struct AddrInfoDeleter {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};

// Whether the connected socket's peer is this machine: 127.0.0.0/8, ::1 or ::ffff:127.x.
bool IsLoopback(int fd) {
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
  if (peer.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr.s_addr) >> 24) == 127;
  }
  if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  return false;
}

}  // namespace

bool HttpConnection::Wait(int fd, short events, double timeout, const Interrupted* interrupted,
                          error_code& ec) {
  const bool bounded = timeout >= 0;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(bounded ? timeout : 0));
  for (;;) {
    int slice = kSliceMs;
    if (bounded) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - Clock::now()).count() + 1;
      slice = static_cast<int>(std::clamp<int64_t>(left, 0, kSliceMs));
    }
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, slice);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) {
      ec = Errno(errno);
      return false;
    }
    if (interrupted != nullptr && (*interrupted)()) {
      ec = boost::asio::error::operation_aborted;
      return false;
    }
    if (bounded && Clock::now() >= deadline) {
      ec = boost::asio::error::timed_out;
      return false;
    }
  }
}

std::unique_ptr<HttpConnection> HttpConnection::Connect(const std::string& host, uint16_t port,
                                                        const HttpTimeouts& timeouts,
                                                        const Interrupted& interrupted,
                                                        error_code& ec) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    ec = boost::asio::error::host_not_found;
    return nullptr;
  }
  std::unique_ptr<addrinfo, AddrInfoDeleter> list(found);
  ec = boost::asio::error::host_not_found;
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            ai->ai_protocol);
    if (fd < 0) {
      ec = Errno(errno);
      continue;
    }
    std::unique_ptr<HttpConnection> conn(new HttpConnection(fd));
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        ec = Errno(errno);
        continue;
      }
      if (!Wait(fd, POLLOUT, timeouts.connect, &interrupted, ec)) {
        if (ec == boost::asio::error::operation_aborted) return nullptr;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        ec = Errno(err);
        continue;
      }
    }
    // Requests are one small write each: send it now rather than wait for an ACK.
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn->loopback_ = IsLoopback(fd);
    ec = {};
    return conn;
  }
  return nullptr;
}

HttpConnection::~HttpConnection() { ::close(fd_); }

void HttpConnection::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

void HttpConnection::Arm(double read_timeout, const Interrupted* interrupted) {
  read_timeout_ = read_timeout;
  interrupted_ = interrupted;
}

size_t HttpConnection::Recv(void* data, size_t size, error_code& ec) {
  ec = {};
  bool drained = false;          // the socket was found empty once: spinning was decided
  Clock::time_point spin_end{};  // set while spinning
  for (;;) {
    const ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) {
      if (spin_end != Clock::time_point{}) spin_backoff_ = 0;  // the spin paid
      in_reply_ = true;
      return static_cast<size_t>(n);
    }
    if (n == 0) {
      ec = boost::asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno(errno);
      return 0;
    }
    if (nowait_) {
      ec = boost::asio::error::would_block;
      return 0;
    }
    if (!drained) {
      drained = true;
      if (StartSpin()) spin_end = Clock::now() + RecvSpin();
    }
    if (spin_end != Clock::time_point{}) {
      if (Clock::now() < spin_end) continue;
      spin_end = {};
      // In vain: skip the spins of this connection's next 1, 2, 4 ... kMaxSpinBackoff waits.
      spin_backoff_ = std::min(std::max(1, 2 * spin_backoff_), kMaxSpinBackoff);
      spin_skip_ = spin_backoff_;
    }
    if (!Wait(fd_, POLLIN, read_timeout_, interrupted_, ec)) return 0;
  }
}

bool HttpConnection::StartSpin() {
  if (!in_reply_ || RecvSpin() == Clock::duration::zero()) return false;
  if (spin_skip_ > 0) {
    --spin_skip_;
    return false;
  }
  return true;
}

size_t HttpConnection::SendVector(const struct iovec* iov, int count, error_code& ec) {
  msghdr msg{};
  msg.msg_iov = const_cast<struct iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(count);
  for (;;) {
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n >= 0) {
      in_reply_ = false;  // its reply takes the server's time: not worth spinning for
      return static_cast<size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno(errno);
      return 0;
    }
    if (!Wait(fd_, POLLOUT, read_timeout_, interrupted_, ec)) return 0;
  }
}

void HttpConnection::SendFileBuffered(int in_fd, uint64_t offset, uint64_t length, error_code& ec) {
  const std::unique_ptr<char[]> buf(new char[std::min<uint64_t>(length, kFileSendBuffer)]);
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, kFileSendBuffer));
    const ssize_t got = ::pread(in_fd, buf.get(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ec = Errno(errno);
      return;
    }
    if (got == 0) {  // the file is shorter than it was said to be
      ec = boost::asio::error::eof;
      return;
    }
    for (size_t sent = 0; sent < static_cast<size_t>(got);) {
      const iovec iov{buf.get() + sent, static_cast<size_t>(got) - sent};
      sent += SendVector(&iov, 1, ec);
      if (ec) return;
    }
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
}

void HttpConnection::SendFile(int in_fd, uint64_t offset, uint64_t length, error_code& ec) {
  ec = {};
  if (loopback_) {
    SendFileBuffered(in_fd, offset, length, ec);
    return;
  }
  auto off = static_cast<off_t>(offset);
  while (length > 0) {
    // sendfile moves at most 0x7ffff000 bytes per call.
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, size_t{1} << 30));
    const ssize_t n = ::sendfile(fd_, in_fd, &off, want);
    if (n > 0) {
      in_reply_ = false;
      length -= static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) {  // the file is shorter than it was said to be
      ec = boost::asio::error::eof;
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno(errno);
      return;
    }
    if (!Wait(fd_, POLLOUT, read_timeout_, interrupted_, ec)) return;
  }
}

}  // namespace aisnative
