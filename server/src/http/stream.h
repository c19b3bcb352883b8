// Stream: one connection's byte stream as the HTTP layer sees it: plain TCP, or TLS over TCP.
//
// The session reads and writes through it (it is a Beast AsyncStream, so http::async_read and
// http::async_write take it), and the two differ only where bytes leave in bulk: over plain TCP
// the Exchange writes straight to the socket (sendmsg, sendfile); over TLS they go through the
// OpenSSL engine. A plain connection pays one predictable branch per operation for the seam.
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>

#include "http/asio.h"

namespace ais {

namespace ssl = boost::asio::ssl;

class Stream {
 public:
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;
  using executor_type = beast::tcp_stream::executor_type;

  explicit Stream(tcp::socket socket) : plain_(std::move(socket)) {}

  // Puts a server-side TLS layer over the connection; the handshake is the caller's.
  // REQUIRES: nothing has been read or written yet.
  void StartTls(ssl::context& ctx) { tls_ = std::make_unique<TlsStream>(std::move(plain_), ctx); }
  // The TLS layer, or nullptr on a plain connection.
  TlsStream* tls() { return tls_.get(); }
  // The TCP layer (under TLS: its raw, encrypted bytes).
  beast::tcp_stream& tcp_layer() { return tls_ ? tls_->next_layer() : plain_; }
  tcp::socket& socket() { return tcp_layer().socket(); }
  executor_type get_executor() { return tcp_layer().get_executor(); }
  // The deadline of the reads and writes that follow (the TCP layer's, which TLS reads through).
  void expires_after(std::chrono::steady_clock::duration d) { tcp_layer().expires_after(d); }

  template <class MutableBufferSequence, class Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(beast::error_code, std::size_t)>(
        [this](auto handler, const MutableBufferSequence& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(handler));
          } else {
            plain_.async_read_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

  template <class ConstBufferSequence, class Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(beast::error_code, std::size_t)>(
        [this](auto handler, const ConstBufferSequence& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(handler));
          } else {
            plain_.async_write_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

 private:
  beast::tcp_stream plain_;  // the connection, until StartTls moves it under tls_
  std::unique_ptr<TlsStream> tls_;
};

}  // namespace ais
