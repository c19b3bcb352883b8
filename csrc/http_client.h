// HttpClient: keep-alive HTTP/1.1 requests over a pool of HttpConnections; a reply's body is
// read straight into the caller's buffers (a whole body into one sized from Content-Length).
// Beast parses and serializes the messages; this class owns connections and their reuse.
//
// Thread-safe: any number of threads may Send at once, each on its own connection; the idle
// pool grows to the most connections used at once, so threads never outnumber it for long. Not
// fork-safe: a child process must make its own client (the Python side keeps one per pid).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "http_connection.h"

namespace aisnative {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// What a reply's head says about its body.
struct HttpReplyHead {
  unsigned status = 0;
  bool has_length = false;  // Content-Length given, and no Transfer-Encoding
  uint64_t length = 0;
  bool encoded = false;  // a Content-Encoding other than identity: the body is not the content
  HttpHeaders fields;    // all header fields, when asked for (see HttpClient::Send)
};

// A request's body: `bytes`, or `length` bytes of the open file `fd` from `offset` (sent with
// sendfile). Empty: no body. The memory or descriptor stays valid during the Send.
struct HttpBody {
  std::string_view bytes{};
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;

  bool file() const { return fd >= 0; }
  uint64_t size() const { return file() ? length : bytes.size(); }
};

// Why a Send returned no exchange.
struct HttpFailure {
  error_code ec;  // boost::asio::error::timed_out for timeouts, operation_aborted if interrupted
  bool connecting = false;  // the connection was never established
};

class HttpClient;

// One request whose reply head has been read; the body is read through it. Its connection
// goes back to the pool on destruction when the reply was read to its end and the server keeps
// the connection open; else it is closed.
class HttpExchange {
 public:
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  const HttpReplyHead& head() const { return head_; }

  // True once the body was read to its end.
  bool finished() const { return finished_; }

  // Reads up to `size` body bytes into `dest` (a Content-Length body straight from the socket,
  // a chunked one decoded by Beast): waits for the first byte, then takes what has arrived.
  // 0 at the end of the body. A body cut short is http::error::partial_message.
  size_t ReadSome(char* dest, size_t size, error_code& ec);

  // Reads the whole body into [dest, dest + head().length). REQUIRES: head().has_length and
  // nothing read yet.
  error_code ReadBody(char* dest);

  // Reads and drops the rest of the body if it is at most `limit` bytes, so that the connection
  // can serve the next request; otherwise (or on an error) the connection is closed.
  void Discard(uint64_t limit);

  // Thread-safe, also while another thread reads the body: shuts the connection down, so that
  // a blocked read fails at once (partial_message), and marks it never to be reused.
  // REQUIRES: the exchange outlives the call.
  void Abort();

 private:
  friend class HttpClient;
  using Parser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

  HttpExchange(HttpClient* client, std::string key, Interrupted interrupted);
  size_t ReadOnce(char* dest, size_t size, error_code& ec);  // one wait at most

  HttpClient* const client_;  // not owned; outlives the exchange
  const std::string key_;     // host:port of the pool the connection belongs to
  bool entered_ = false;      // counted in use by the client (HttpClient::Enter)
  std::unique_ptr<HttpConnection> conn_;
  // The connection polls it while waiting: it lives here, at a fixed address.
  const Interrupted interrupted_;
  std::unique_ptr<Parser> parser_;  // reads the head, then a chunked body
  HttpReplyHead head_;
  uint64_t remaining_ = 0;  // of a Content-Length body
  bool keep_alive_ = false;
  bool finished_ = false;
  std::atomic<bool> aborted_{false};  // set by Abort from any thread
};

// Connections of one host:port: those idle in the pool, and how many exchanges hold one now.
struct HostPool {
  std::vector<std::unique_ptr<HttpConnection>> idle;
  size_t in_use = 0;  // live HttpExchanges of this host
  size_t peak = 0;    // the most in use at once so far
};

class HttpClient {
 public:
  // Idle connections kept per host:port: as many as were ever in use at once (up to
  // kMaxAdaptiveIdle), and at least `min_idle_per_host`. A pool sized below the number of
  // threads that share it would otherwise close and reopen a connection for most requests.
  static constexpr size_t kMaxAdaptiveIdle = 256;
  explicit HttpClient(size_t min_idle_per_host) : min_idle_(min_idle_per_host) {}

  // Raises the idle connections always kept per host to `n` (never lowers it).
  void KeepIdleAtLeast(size_t n);

  // Sends `method target` with `headers` (Host and, for a body, Content-Length are added) and
  // `body` to host:port, and reads the reply's head; its fields are kept when `keep_fields` or
  // the status is not 2xx. A pooled connection the server has closed meanwhile is replaced by
  // a new one. A server may answer before it has read the whole body (an error, a redirect)
  // and close: a send cut short still reads that reply. `interrupted` is polled while waiting.
  // nullptr with `failure` set on a transport error.
  std::unique_ptr<HttpExchange> Send(const std::string& host, uint16_t port,
                                     const std::string& method, const std::string& target,
                                     const HttpHeaders& headers, const HttpBody& body,
                                     bool keep_fields, const HttpTimeouts& timeouts,
                                     Interrupted interrupted, HttpFailure& failure);

 private:
  friend class HttpExchange;
  // An exchange begins: counted in use until Leave.
  void Enter(const std::string& key);
  std::unique_ptr<HttpConnection> TakeIdle(const std::string& key);
  void DropIdle(const std::string& key);
  // An exchange ends; its connection (nullptr: none to reuse) goes back to the pool if the
  // pool keeps fewer than its limit.
  void Leave(const std::string& key, std::unique_ptr<HttpConnection> conn);

  std::mutex mu_;
  size_t min_idle_;                                   // guarded by mu_
  std::unordered_map<std::string, HostPool> hosts_;  // guarded by mu_
};

}  // namespace aisnative
