#include "http_client.h"

#include <algorithm>
#include <array>
#include <boost/asio/error.hpp>
#include <boost/beast/core/span.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cstring>
#include <limits>

namespace aisnative {
namespace {

namespace http = boost::beast::http;

// AIS replies carry object metadata in headers; anything this large is not a sane reply.
constexpr uint32_t kHeaderLimit = 1 << 20;

std::string HostHeader(const std::string& host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out = ipv6 ? "[" + host + "]" : host;
  if (port != 80) out += ":" + std::to_string(port);
  return out;
}

// A reused connection that fails before any byte of a reply arrived was most likely closed by
// the server while idle: the request is sent again on a new connection.
bool StaleConnection(const error_code& ec) {
  return ec != boost::asio::error::operation_aborted && ec != boost::asio::error::timed_out;
}

// A send that failed this way may have met a server that answered and closed before reading
// the whole body: its reply may be waiting in the socket.
bool EarlyReplyPossible(const error_code& ec) {
  return ec == boost::asio::error::broken_pipe || ec == boost::asio::error::connection_reset;
}

}  // namespace

HttpExchange::HttpExchange(HttpClient* client, std::string key, Interrupted interrupted)
    : client_(client), key_(std::move(key)), interrupted_(std::move(interrupted)) {}

HttpExchange::~HttpExchange() {
  if (!entered_) return;
  const bool reusable = conn_ != nullptr && finished_ && keep_alive_ && !aborted_ && conn_->buffer().size() == 0;
  client_->Leave(key_, reusable ? std::move(conn_) : nullptr);
}

void HttpExchange::Abort() {
  aborted_ = true;  // before the shutdown: a reader woken by it must not pool the connection
  conn_->Shutdown();
}

size_t HttpExchange::ReadSome(char* dest, size_t size, error_code& ec) {
  // Fills `dest` as far as bytes have arrived: the first read may wait, the others do not
  // (a chunked stream arrives in many small chunks; one call per chunk costs a Python call).
  ec = {};
  size_t total = 0;
  while (total < size && !finished_) {
    conn_->set_nowait(total > 0);
    const size_t n = ReadOnce(dest + total, size - total, ec);
    conn_->set_nowait(false);
    if (ec == boost::asio::error::would_block) {
      ec = {};
      break;
    }
    if (ec) return 0;
    total += n;
  }
  return total;
}

size_t HttpExchange::ReadOnce(char* dest, size_t size, error_code& ec) {
  auto& buffer = conn_->buffer();
  if (head_.has_length) {
    // Bytes already buffered first, then straight from the socket into `dest`.
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, remaining_));
    size_t n = std::min(buffer.size(), want);
    if (n > 0) {
      std::memcpy(dest, buffer.data().data(), n);
      buffer.consume(n);
    } else {
      n = conn_->Recv(dest, want, ec);
      if (ec == boost::asio::error::eof) ec = http::error::partial_message;
      if (ec) return 0;
    }
    remaining_ -= n;
    finished_ = remaining_ == 0;
    return n;
  }
  // Chunked, or delimited by the end of the connection: Beast decodes into `dest`.
  auto& body = parser_->get().body();
  while (!parser_->is_done()) {
    body.data = dest;
    body.size = size;
    http::read_some(*conn_, buffer, *parser_, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return 0;
    const size_t n = size - body.size;
    if (n > 0) {
      finished_ = parser_->is_done();
      return n;
    }
  }
  finished_ = true;
  return 0;
}

error_code HttpExchange::ReadBody(char* dest) {
  error_code ec;
  uint64_t got = 0;
  while (got < head_.length) {
    got += ReadSome(dest + got, static_cast<size_t>(head_.length - got), ec);
    if (ec) return ec;
  }
  finished_ = true;
  return {};
}

void HttpExchange::Discard(uint64_t limit) {
  if (head_.has_length && remaining_ > limit) return;
  std::array<char, 16 << 10> sink;
  error_code ec;
  uint64_t dropped = 0;
  while (!finished_ && dropped <= limit) {
    dropped += ReadSome(sink.data(), sink.size(), ec);
    if (ec) return;
  }
}

std::unique_ptr<HttpExchange> HttpClient::Send(const std::string& host, uint16_t port,
                                               const std::string& method,
                                               const std::string& target,
                                               const HttpHeaders& headers, const HttpBody& body,
                                               bool keep_fields, const HttpTimeouts& timeouts,
                                               Interrupted interrupted, HttpFailure& failure) {
  // A file body goes after the head (sendfile); bytes go with it in one gathered write.
  http::request<http::span_body<const char>> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, HostHeader(host, port));
  for (const auto& [name, value] : headers) req.set(name, value);
  if (body.size() > 0) {
    if (!body.file()) req.body() = boost::beast::span<const char>(body.bytes.data(), body.bytes.size());
    req.content_length(body.size());
  }

  std::string key = host + ":" + std::to_string(port);
  std::unique_ptr<HttpExchange> ex(new HttpExchange(this, key, std::move(interrupted)));
  Enter(key);
  ex->entered_ = true;
  for (bool retried = false;; retried = true) {
    ex->conn_ = retried ? nullptr : TakeIdle(key);
    const bool reused = ex->conn_ != nullptr;
    if (!reused) {
      ex->conn_ = HttpConnection::Connect(host, port, timeouts, ex->interrupted_, failure.ec);
      if (ex->conn_ == nullptr) {
        failure.connecting = true;
        return nullptr;
      }
    }
    HttpConnection& conn = *ex->conn_;
    conn.Arm(timeouts.read, &ex->interrupted_);
    ex->parser_ = std::make_unique<HttpExchange::Parser>();
    HttpExchange::Parser& parser = *ex->parser_;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(std::numeric_limits<uint64_t>::max());  // bodies stream to the caller
    parser.skip(method == "HEAD");  // its Content-Length describes a body that is not sent
    error_code ec;
    if (body.file()) {
      http::request_serializer<http::span_body<const char>> sr(req);
      http::write_header(conn, sr, ec);
      if (!ec) conn.SendFile(body.fd, body.offset, body.length, ec);
    } else {
      http::write(conn, req, ec);
    }
    const bool sent = !ec;
    if (sent || EarlyReplyPossible(ec)) {
      error_code read_ec;
      http::read_header(conn, conn.buffer(), parser, read_ec);
      // A reply read after a cut-short send stands; else the send's error is the cause.
      if (!read_ec || sent) ec = read_ec;
    }
    if (ec) {
      if (reused && !parser.got_some() && StaleConnection(ec)) {
        DropIdle(key);  // the server closed them all, most likely (a restart)
        continue;
      }
      failure.ec = ec;
      return nullptr;
    }
    const auto& msg = parser.get();
    HttpReplyHead& head = ex->head_;
    head.status = msg.result_int();
    const auto length = parser.content_length();
    head.has_length = length.has_value() && !parser.chunked();
    head.length = length.value_or(0);
    const auto encoding = msg[http::field::content_encoding];
    head.encoded = !encoding.empty() && !boost::beast::iequals(encoding, "identity");
    if (keep_fields || head.status < 200 || head.status >= 300) {
      for (const auto& field : msg) {
        head.fields.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
    }
    ex->remaining_ = head.has_length ? head.length : 0;
    ex->finished_ = parser.is_done() || (head.has_length && head.length == 0);
    ex->keep_alive_ = sent && parser.keep_alive();  // after a cut-short send, never reused
    return ex;
  }
}

void HttpClient::KeepIdleAtLeast(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  min_idle_ = std::max(min_idle_, n);
}

void HttpClient::Enter(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  HostPool& pool = hosts_[key];
  pool.peak = std::max(pool.peak, ++pool.in_use);
}

std::unique_ptr<HttpConnection> HttpClient::TakeIdle(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = hosts_.find(key);
  if (it == hosts_.end() || it->second.idle.empty()) return nullptr;
  std::unique_ptr<HttpConnection> conn = std::move(it->second.idle.back());
  it->second.idle.pop_back();
  return conn;
}

void HttpClient::DropIdle(const std::string& key) {
  std::vector<std::unique_ptr<HttpConnection>> dropped;  // closed after the unlock
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = hosts_.find(key); it != hosts_.end()) dropped.swap(it->second.idle);
}

void HttpClient::Leave(const std::string& key, std::unique_ptr<HttpConnection> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  HostPool& pool = hosts_[key];
  --pool.in_use;
  const size_t keep = std::max(min_idle_, std::min(pool.peak, kMaxAdaptiveIdle));
  if (conn != nullptr && pool.idle.size() < keep) pool.idle.push_back(std::move(conn));
}

}  // namespace aisnative
