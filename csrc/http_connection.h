// HttpConnection: one TCP connection with a deadline on every wait, usable as a Beast
// SyncReadStream / SyncWriteStream. Blocking calls wait in poll() slices so that a caller can
// be interrupted (Ctrl-C in Python) while no byte arrives.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace aisnative {

using boost::system::error_code;

// Seconds one wait may last; negative: no limit.
struct HttpTimeouts {
  double connect = -1;
  double read = -1;
};

// Asked while a wait goes on (every slice, and after EINTR): true aborts the call with
// boost::asio::error::operation_aborted.
using Interrupted = std::function<bool()>;

class HttpConnection {
 public:
  // A connection to host:port, trying each address getaddrinfo gives within timeouts.connect
  // per address; nullptr with `ec` set (boost::asio::error::timed_out on a timeout).
  static std::unique_ptr<HttpConnection> Connect(const std::string& host, uint16_t port,
                                                 const HttpTimeouts& timeouts,
                                                 const Interrupted& interrupted, error_code& ec);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // The deadline and interrupt check of the calls that follow. `interrupted` must outlive them.
  void Arm(double read_timeout, const Interrupted* interrupted);

  // Bytes received past the last parsed message head: Beast's parser reads through it.
  boost::beast::flat_buffer& buffer() { return buffer_; }

  // Receives at least one byte into [data, data + size); 0 with `ec` = eof when the peer closed.
  // With `nowait`, a Recv that finds nothing received fails with would_block instead of waiting.
  size_t Recv(void* data, size_t size, error_code& ec);
  void set_nowait(bool nowait) { nowait_ = nowait; }

  // Thread-safe, also while another thread waits in Recv: shuts both directions down, so that
  // the wait ends at once with eof. The descriptor stays open until destruction.
  void Shutdown();

  // Beast's stream concepts: read_some fills the first non-empty buffer, write_some sends up to
  // 16 buffers in one sendmsg.
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, error_code& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer b = *it;
      if (b.size() > 0) return Recv(b.data(), b.size(), ec);
    }
    ec = {};
    return 0;
  }
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <class ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers, error_code& ec);
  template <class ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers) {
    error_code ec;
    const size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  explicit HttpConnection(int fd) : fd_(fd) {
    buffer_.reserve(kReadSize);  // Beast reads as much as the buffer has room for
  }

  static constexpr size_t kReadSize = 64 << 10;

  // Waits until the socket is ready for `events` (POLLIN / POLLOUT) within `timeout` seconds.
  static bool Wait(int fd, short events, double timeout, const Interrupted* interrupted,
                   error_code& ec);
  size_t SendVector(const struct iovec* iov, int count, error_code& ec);

 public:
  // Sends `length` bytes of file `in_fd` from `offset` (the file's own position is left alone),
  // waiting as writes do. All or `ec` set. To another machine with sendfile(2): no copy through
  // user space. To this machine (a loopback peer: the embedded server) read into a small buffer
  // and sent from there, which is faster: the receiving server copies each segment out of the
  // socket, and after a sendfile those are the file's page-cache pages, cold in the CPU caches,
  // where a buffered send hands it bytes just written, still in them (figures in
  // docs/benchmarks-i23.md, "A file PUT to a server on this machine").
  void SendFile(int in_fd, uint64_t offset, uint64_t length, error_code& ec);

 private:
  // Whether Recv, finding the socket drained, retries for a while before it waits.
  bool StartSpin();
  // SendFile's loopback path: pread into a buffer, then SendVector.
  void SendFileBuffered(int in_fd, uint64_t offset, uint64_t length, error_code& ec);
  static constexpr size_t kFileSendBuffer = 256 << 10;  // within a core's L2 cache

  const int fd_;  // owned, non-blocking
  bool loopback_ = false;  // the peer is on this machine (set by Connect)
  // Spinning before a wait (RecvSpin in the .cc): only inside a reply (bytes came since the
  // last send), and after a spin in vain only before every spin_backoff_-th wait, until one
  // pays again.
  static constexpr int kMaxSpinBackoff = 16;
  bool in_reply_ = false;
  int spin_backoff_ = 0;
  int spin_skip_ = 0;
  boost::beast::flat_buffer buffer_;
  double read_timeout_ = -1;
  const Interrupted* interrupted_ = nullptr;  // not owned; see Arm
  bool nowait_ = false;
};

template <class ConstBufferSequence>
size_t HttpConnection::write_some(const ConstBufferSequence& buffers, error_code& ec) {
  constexpr int kMaxBuffers = 16;
  struct iovec iov[kMaxBuffers];
  int count = 0;
  for (auto it = boost::asio::buffer_sequence_begin(buffers);
       it != boost::asio::buffer_sequence_end(buffers) && count < kMaxBuffers; ++it) {
    const boost::asio::const_buffer b = *it;
    if (b.size() == 0) continue;
    iov[count].iov_base = const_cast<void*>(b.data());
    iov[count].iov_len = b.size();
    ++count;
  }
  ec = {};
  return count == 0 ? 0 : SendVector(iov, count, ec);
}

}  // namespace aisnative
