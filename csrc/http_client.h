// HttpClient: keep-alive HTTP/1.1 GETs over a pool of HttpConnections, with the body read
// straight into a buffer the caller sizes from the reply's Content-Length. Beast parses and
// serializes the messages; this class owns connections and their reuse.
//
// Thread-safe: any number of threads may run Get at once, each on its own connection. Not
// fork-safe: a child process must make its own client (the Python side keeps one per pid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "http_connection.h"

namespace aisnative {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// What a reply's head says about its body.
struct HttpReplyHead {
  unsigned status = 0;
  bool has_length = false;  // Content-Length given, and no Transfer-Encoding
  uint64_t length = 0;
  bool encoded = false;  // a Content-Encoding other than identity: the body is not the content
  HttpHeaders fields;    // all header fields, kept for replies other than 2xx only
};

// Why a Get returned no exchange.
struct HttpFailure {
  error_code ec;  // boost::asio::error::timed_out for timeouts, operation_aborted if interrupted
  bool connecting = false;  // the connection was never established
};

class HttpClient;

// One GET whose head has been read. Its connection goes back to the pool on destruction when
// the reply was read to its end and the server keeps the connection open; else it is closed.
class HttpExchange {
 public:
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  const HttpReplyHead& head() const { return head_; }

  // Reads the whole body into [dest, dest + head().length).
  // REQUIRES: head().has_length, and no earlier ReadBody or Discard.
  error_code ReadBody(char* dest);

  // Reads and drops a body of at most kMaxDiscard bytes so that the connection can serve the
  // next request; a longer or unknown-length body closes it instead.
  void Discard();
  static constexpr uint64_t kMaxDiscard = 64 << 10;

 private:
  friend class HttpClient;
  HttpExchange(HttpClient* client, std::string key, std::unique_ptr<HttpConnection> conn,
               Interrupted interrupted)
      : client_(client), key_(std::move(key)), conn_(std::move(conn)),
        interrupted_(std::move(interrupted)) {}

  HttpClient* const client_;  // not owned; outlives the exchange
  const std::string key_;     // host:port of the pool the connection belongs to
  std::unique_ptr<HttpConnection> conn_;
  // The connection polls it while waiting: it lives here, at a fixed address.
  const Interrupted interrupted_;
  HttpReplyHead head_;
  bool keep_alive_ = false;
  bool finished_ = false;  // the body was read to its end
};

class HttpClient {
 public:
  // Keeps at most `max_idle_per_host` idle connections per host:port.
  explicit HttpClient(size_t max_idle_per_host) : max_idle_(max_idle_per_host) {}

  // Sends `GET target` with `headers` (Host is added) to host:port and reads the reply's head.
  // A pooled connection the server has closed meanwhile is replaced by a new one, once.
  // `interrupted` is polled while waiting. nullptr with `failure` set on a transport error.
  std::unique_ptr<HttpExchange> Get(const std::string& host, uint16_t port,
                                    const std::string& target, const HttpHeaders& headers,
                                    const HttpTimeouts& timeouts, Interrupted interrupted,
                                    HttpFailure& failure);

 private:
  friend class HttpExchange;
  std::unique_ptr<HttpConnection> TakeIdle(const std::string& key);
  void DropIdle(const std::string& key);
  void GiveBack(const std::string& key, std::unique_ptr<HttpConnection> conn);

  const size_t max_idle_;
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<HttpConnection>>> idle_;  // mu_
};

}  // namespace aisnative
