#include "http_client.h"

#include <algorithm>
#include <array>
#include <boost/asio/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <cstring>

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

}  // namespace

HttpExchange::~HttpExchange() {
  if (conn_ != nullptr && finished_ && keep_alive_ && conn_->buffer().size() == 0) {
    client_->GiveBack(key_, std::move(conn_));
  }
}

error_code HttpExchange::ReadBody(char* dest) {
  auto& buffer = conn_->buffer();
  const uint64_t length = head_.length;
  const size_t buffered = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length));
  if (buffered > 0) std::memcpy(dest, buffer.data().data(), buffered);
  buffer.consume(buffered);
  uint64_t got = buffered;
  error_code ec;
  while (got < length) {
    got += conn_->Recv(dest + got, static_cast<size_t>(length - got), ec);
    if (ec == boost::asio::error::eof) return http::error::partial_message;
    if (ec) return ec;
  }
  finished_ = true;
  return {};
}

void HttpExchange::Discard() {
  if (!head_.has_length || head_.length > kMaxDiscard) return;
  auto& buffer = conn_->buffer();
  uint64_t left = head_.length;
  const size_t buffered = static_cast<size_t>(std::min<uint64_t>(buffer.size(), left));
  buffer.consume(buffered);
  left -= buffered;
  std::array<char, 16 << 10> sink;
  error_code ec;
  while (left > 0) {
    left -= conn_->Recv(sink.data(), static_cast<size_t>(std::min<uint64_t>(left, sink.size())), ec);
    if (ec) return;
  }
  finished_ = true;
}

std::unique_ptr<HttpExchange> HttpClient::Get(const std::string& host, uint16_t port,
                                              const std::string& target,
                                              const HttpHeaders& headers,
                                              const HttpTimeouts& timeouts,
                                              Interrupted interrupted, HttpFailure& failure) {
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, HostHeader(host, port));
  for (const auto& [name, value] : headers) req.set(name, value);

  std::string key = host + ":" + std::to_string(port);
  std::unique_ptr<HttpExchange> ex(
      new HttpExchange(this, key, nullptr, std::move(interrupted)));
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
    http::response_parser<http::empty_body> parser;
    parser.header_limit(kHeaderLimit);
    error_code ec;
    http::write(conn, req, ec);
    if (!ec) http::read_header(conn, conn.buffer(), parser, ec);
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
    if (head.status < 200 || head.status >= 300) {
      for (const auto& field : msg) {
        head.fields.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
    }
    ex->keep_alive_ = parser.keep_alive();
    return ex;
  }
}

std::unique_ptr<HttpConnection> HttpClient::TakeIdle(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = idle_.find(key);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  std::unique_ptr<HttpConnection> conn = std::move(it->second.back());
  it->second.pop_back();
  return conn;
}

void HttpClient::DropIdle(const std::string& key) {
  std::vector<std::unique_ptr<HttpConnection>> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = idle_.find(key); it != idle_.end()) dropped.swap(it->second);
}

void HttpClient::GiveBack(const std::string& key, std::unique_ptr<HttpConnection> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& idle = idle_[key];
  if (idle.size() < max_idle_) idle.push_back(std::move(conn));
}

}  // namespace aisnative
