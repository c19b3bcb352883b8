// Requests to one transformer made by the coroutine of an I/O thread itself (Beast, no thread
// hop): the inline GET of a small object PUTs it and relays the reply from there. Connections
// are kept alive per io_context (each I/O thread runs its own), so a connection is only ever
// used by the thread that made it.
//
// TransformerClient (libcurl, blocking) serves every other call: the offline workers, large
// objects, hpull.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "http/asio.h"
#include "util/status.h"

namespace ais::etl {

class TransformerConnections;

// One request's reply, its header read. The body follows through Read. Destroying it returns
// the connection to its pool when the reply was read to its end and keeps the connection alive;
// otherwise the connection is closed. REQUIRES: used and destroyed on the I/O thread that
// started it, while its TransformerConnections lives.
class TransformerReply {
 public:
  ~TransformerReply();
  TransformerReply(const TransformerReply&) = delete;
  TransformerReply& operator=(const TransformerReply&) = delete;

  int status() const { return static_cast<int>(parser_.get().result_int()); }
  std::optional<uint64_t> content_length() const {
    const auto n = parser_.content_length();
    return n ? std::optional<uint64_t>(*n) : std::nullopt;
  }
  bool done() const { return parser_.is_done(); }
  // Up to `len` (REQUIRES: > 0) next body bytes into `buf`; 0 once the body ended. Errors (a timeout: the
  // transform's deadline, set when it started) as TransformerClient::Call words them.
  Task<Result<size_t>> Read(char* buf, size_t len);
  // The rest of the body, which must be at most `limit` bytes (kInvalidArgument otherwise).
  Task<Result<std::string>> ReadAll(uint64_t limit);

 private:
  friend class TransformerConnections;
  struct Connection;
  TransformerReply(TransformerConnections& owner, std::unique_ptr<Connection> conn,
                   std::chrono::milliseconds timeout);

  TransformerConnections& owner_;
  std::unique_ptr<Connection> conn_;
  http::response_parser<http::buffer_body> parser_;
  std::chrono::milliseconds timeout_;
  bool broken_ = false;  // a read failed: the connection is not reused
};

class TransformerConnections {
 public:
  // At most this many idle connections are kept per I/O thread.
  static constexpr size_t kMaxIdlePerThread = 64;

  explicit TransformerConnections(uint16_t port);  // of the transformer, on 127.0.0.1
  ~TransformerConnections();
  TransformerConnections(const TransformerConnections&) = delete;
  TransformerConnections& operator=(const TransformerConnections&) = delete;

  // Sends `req` (its Host and keep-alive set here) within `timeout` (the whole call, the
  // reply's body included) and reads the reply's header. A refused connection is retried (3
  // times, 0.3 s apart); a kept connection the transformer closed meanwhile is replaced once.
  // Errors are kIOError "ETL error: ..." as TransformerClient::Call words them.
  Task<Result<std::unique_ptr<TransformerReply>>> Send(http::request<http::string_body>& req,
                                                        std::chrono::milliseconds timeout);
  // Closes the idle connections and keeps none from now on (a finished reply's connection is
  // closed by its own thread). Called before the I/O contexts go: a socket must not outlive its
  // context, and a request cut short at the stop may hold the last reference to this pool.
  void CloseIdle();

 private:
  friend class TransformerReply;
  using Connection = TransformerReply::Connection;
  std::unique_ptr<Connection> TakeIdle(asio::execution_context* thread);
  void PutIdle(std::unique_ptr<Connection> conn);

  const tcp::endpoint endpoint_;
  const std::string host_;  // the Host header: "127.0.0.1:PORT"
  std::mutex mu_;
  // Idle connections by the io_context (I/O thread) they belong to; guarded by mu_.
  std::unordered_map<asio::execution_context*, std::vector<std::unique_ptr<Connection>>> idle_;
  bool closed_ = false;  // CloseIdle ran; guarded by mu_
};

}  // namespace ais::etl
