// HttpServer: the accept loop and one coroutine per connection (read -> handle -> reply -> read).
// Each worker thread runs its own io_context; connections are dealt round-robin and never move,
// so a connection's state needs no locking. The accept loop has a thread of its own, so a burst
// of new connections is taken at once even while every worker is busy.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http/asio.h"
#include "http/exchange.h"

namespace ais {

using RequestHandler = std::function<Task<void>(Exchange&)>;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0: ephemeral
  size_t threads = 0;    // 0: two per CPU, at least 4
  size_t header_limit = 64 << 10;                  // bytes of a request's header section (431 above)
  std::chrono::seconds idle_timeout{300};          // a kept-alive connection may wait this long for a request
  std::chrono::seconds header_timeout{30};         // from a request's first byte to its last header byte
  size_t max_connections = 8192;                   // more are answered 503 + Retry-After and closed
  size_t max_connections_per_address = 1024;       // the same, from one client IP address
  std::shared_ptr<ssl::context> tls;               // set: every connection is TLS (MakeServerTlsContext)
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, NodeInfo node, RequestHandler handler);
  ~HttpServer();

  // Binds the listening socket. Returns the bound port.
  Result<uint16_t> Bind();
  // Client connections open now.
  size_t open_connections() const { return connections_.load(std::memory_order_relaxed); }
  // Runs until Stop() (or SIGINT/SIGTERM when handle_signals).
  void Run(bool handle_signals);
  void Stop();

 private:
  Task<void> AcceptLoop();
  // `address`: the client's IP, counted in per_address_ by AcceptLoop (Session uncounts it).
  Task<void> Session(tcp::socket socket, std::string address);
  // Tells a connection over a connection limit to come back later (`why`), then closes it.
  Task<void> Refuse(tcp::socket socket, Status why);
  // Counts a connection from `address` against both limits; false (nothing counted) if over one.
  bool Admit(const std::string& address, Status* why);
  void Release(const std::string& address);
  // The TLS handshake, within `timeout`. False: the connection is done with (plain HTTP sent
  // to the TLS port has had its 400 reply).
  Task<bool> Handshake(Stream& stream, std::string_view remote, std::chrono::seconds timeout);
  // 307 to the request's own URL with AIS's redirect marks (see IsUnredirectedBodyProbe).
  Task<void> RedirectToSelf(Stream& stream, const http::request<http::buffer_body>& req);
  // Ends a connection: TLS close_notify, TCP FIN, then, if the client may still be sending
  // (`unread`), a bounded wait for it to finish.
  Task<void> Close(Stream& stream, bool unread);
  // Reads and drops what the peer still sends, for a while (bounded): see Close.
  Task<void> Linger(beast::tcp_stream& tcp);
  // An error reply for a connection that has no Exchange (the request's head was not read, or
  // the connection is refused): AisErrorText's JSON with HTTP status `code`, not kept alive.
  // `S`: Stream, or the raw beast::tcp_stream under a failed TLS handshake.
  template <class S>
  Task<void> ReplyWithoutExchange(S& stream, http::status code, const Status& st, std::string_view remote,
                                  const HeaderList& headers);
  static std::string RemoteAddress(const tcp::socket& socket);

  const HttpServerOptions opts_;
  const NodeInfo node_;
  const RequestHandler handler_;
  // Before contexts_: destroying a context destroys its sessions, which uncount themselves.
  std::atomic<size_t> connections_{0};  // open sessions
  std::mutex per_address_mu_;
  std::unordered_map<std::string, size_t> per_address_;  // open sessions by client IP; guarded by per_address_mu_
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  // Declared after contexts_ (destroyed before them: the loop's pending socket belongs to one).
  asio::io_context accept_ctx_{1};
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::atomic<size_t> next_{0};
};

}  // namespace ais
