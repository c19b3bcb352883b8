#include "http/server.h"

#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "util/strings.h"

namespace ais {
namespace {

// After a reply sent before the request was read through: how long, and how much, to keep
// reading (and dropping) before the close.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLingerBytes = 8 << 20;
const HeaderList kNoHeaders;
// How long a closing TLS connection waits for the peer's close_notify (most clients just close).
constexpr auto kTlsShutdownTime = std::chrono::seconds(2);
constexpr auto kRefusedHandshakeTime = std::chrono::seconds(5);

// The official Python SDK sends an HTTPS request that has a body in two legs, because an AIS
// proxy redirects such requests to a target and a TLS server may close the connection before
// reading a body: first the head alone, with the body's Content-Length and `Connection: close`
// and no body, expecting a 301/307 before any body byte is read; then the whole request to the
// Location. This node is proxy and target in one, so it redirects the first leg to itself, marked
// as AIS marks its redirects (`pid`, `utm`), and serves the marked second leg.
bool IsUnredirectedBodyProbe(const http::request<http::buffer_body>& req) {
  std::string_view target = req.target();
  if (target.substr(0, 4) != "/v1/" || req.keep_alive() || req.find(http::field::content_length) == req.end()) {
    return false;
  }
  auto q = target.find('?');
  if (q == std::string_view::npos) return true;
  for (auto kv : Split(target.substr(q + 1), '&')) {
    if (kv.substr(0, 4) == "pid=") return false;
  }
  return true;
}

// Connections go round-robin to I/O threads, and a thread in a long sendfile makes the others it
// serves wait: twice as many threads as CPUs (at least 4) keeps one long send from stalling the
// connections that share its thread.
size_t DefaultThreads() { return std::max(4u, 2 * std::thread::hardware_concurrency()); }

}  // namespace

HttpServer::HttpServer(HttpServerOptions opts, NodeInfo node, RequestHandler handler)
    : opts_(std::move(opts)), node_(std::move(node)), handler_(std::move(handler)) {
  size_t n = opts_.threads ? opts_.threads : DefaultThreads();
  for (size_t i = 0; i < n; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    guards_.push_back(asio::make_work_guard(*contexts_.back()));
  }
}

HttpServer::~HttpServer() { Stop(); }

Result<uint16_t> HttpServer::Bind() {
  beast::error_code ec;
  auto addr = asio::ip::make_address(opts_.host, ec);
  if (ec) return Status::InvalidArgument("bad listen address " + opts_.host + ": " + ec.message());
  tcp::endpoint ep{addr, opts_.port};
  acceptor_ = std::make_unique<tcp::acceptor>(accept_ctx_);
  acceptor_->open(ep.protocol(), ec);
  if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(ep, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IOError("cannot listen on " + opts_.host + ":" + std::to_string(opts_.port) + ": " + ec.message());
  return acceptor_->local_endpoint().port();
}

void HttpServer::Run(bool handle_signals) {
  std::unique_ptr<asio::signal_set> signals;
  if (handle_signals) {
    signals = std::make_unique<asio::signal_set>(accept_ctx_, SIGINT, SIGTERM);
    signals->async_wait([this](beast::error_code ec, int) {
      if (!ec) Stop();
    });
  }
  asio::co_spawn(accept_ctx_, AcceptLoop(), asio::detached);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < contexts_.size(); ++i) threads.emplace_back([this, i] { contexts_[i]->run(); });
  accept_ctx_.run();
  for (auto& t : threads) t.join();
}

void HttpServer::Stop() {
  for (auto& g : guards_) g.reset();
  for (auto& c : contexts_) c->stop();
  accept_ctx_.stop();
}

Task<void> HttpServer::AcceptLoop() {
  for (;;) {
    auto& ctx = *contexts_[next_++ % contexts_.size()];
    tcp::socket socket(ctx);
    beast::error_code ec;
    co_await acceptor_->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) co_return;
      // E.g. EMFILE: keep serving the connections we have, and do not spin while it lasts.
      asio::steady_timer pause(accept_ctx_, std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto peer = socket.remote_endpoint(ec);
    std::string address = ec ? std::string() : peer.address().to_string();
    Status why;
    if (!Admit(address, &why)) {
      asio::co_spawn(ctx, Refuse(std::move(socket), std::move(why)), asio::detached);
      continue;
    }
    asio::co_spawn(ctx, Session(std::move(socket), std::move(address)), asio::detached);
  }
}

bool HttpServer::Admit(const std::string& address, Status* why) {
  if (connections_.load(std::memory_order_relaxed) >= opts_.max_connections) {
    *why = Status::TooManyRequests("too many connections: the server is at its limit, retry later");
    return false;
  }
  {
    std::lock_guard lock(per_address_mu_);
    size_t& n = per_address_[address];
    if (n >= opts_.max_connections_per_address) {
      *why = Status::TooManyRequests("too many connections from " + address + " (limit " +
                                     std::to_string(opts_.max_connections_per_address) + "), retry later");
      return false;
    }
    ++n;
  }
  connections_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void HttpServer::Release(const std::string& address) {
  {
    std::lock_guard lock(per_address_mu_);
    auto it = per_address_.find(address);
    if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
  }
  connections_.fetch_sub(1, std::memory_order_relaxed);
}

Task<void> HttpServer::Refuse(tcp::socket socket, Status why) {
  const std::string remote = RemoteAddress(socket);
  Stream stream(std::move(socket));
  // Refused connections are not counted: their handshake gets a short deadline of its own.
  if (opts_.tls && !co_await Handshake(stream, remote, kRefusedHandshakeTime)) co_return;
  // Named locals, not temporaries in the co_await operand (GCC 12 mishandles those).
  const HeaderList headers = {{"Retry-After", "1"}};
  co_await ReplyWithoutExchange(stream, http::status::service_unavailable, why, remote, headers);
  co_await Close(stream, false);
}

Task<bool> HttpServer::Handshake(Stream& stream, std::string_view remote, std::chrono::seconds timeout) {
  stream.StartTls(*opts_.tls);
  stream.expires_after(timeout);
  beast::error_code ec;
  co_await stream.tls()->async_handshake(ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_return true;
  // OpenSSL recognizes a plain HTTP request where a TLS record should be (and sends no alert):
  // answer it in plain HTTP, as Go's net/http does, so the client learns why.
  if (ec.category() == asio::error::get_ssl_category() && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_HTTP_REQUEST) {
    const Status st = Status::InvalidArgument("client sent an HTTP request to an HTTPS server");
    co_await ReplyWithoutExchange(stream.tcp_layer(), http::status::bad_request, st, remote, kNoHeaders);
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    co_await Linger(stream.tcp_layer());
  }
  co_return false;
}

Task<void> HttpServer::RedirectToSelf(Stream& stream, const http::request<http::buffer_body>& req) {
  std::string_view target = req.target();
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::string location = "https://" + std::string(req[http::field::host]) + std::string(target) +
                         (target.find('?') == std::string_view::npos ? "?" : "&") + "pid=p" + node_.daemon_id +
                         "&utm=" + std::to_string(now_ns);
  http::response<http::empty_body> res{http::status::temporary_redirect, req.version()};
  res.set(http::field::location, location);
  res.content_length(0);
  res.keep_alive(false);
  beast::error_code ec;
  stream.expires_after(std::chrono::seconds(10));
  co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
}

Task<void> HttpServer::Close(Stream& stream, bool unread) {
  beast::error_code ec;
  if (auto* tls = stream.tls()) {
    // close_notify tells the client the data ended here rather than was cut.
    stream.expires_after(kTlsShutdownTime);
    co_await tls->async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  // The client may still be sending what we did not read: closing now would reset the
  // connection and could destroy our reply in its receive buffer. Let it finish (bounded).
  if (unread) co_await Linger(stream.tcp_layer());
}

Task<void> HttpServer::Linger(beast::tcp_stream& tcp) {
  tcp.expires_after(kLingerTime);
  std::vector<char> sink(64 << 10);
  beast::error_code ec;
  for (size_t n = 0; n < kLingerBytes && !ec;) {
    n += co_await tcp.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
  }
}

std::string HttpServer::RemoteAddress(const tcp::socket& socket) {
  beast::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  return ec ? std::string() : ep.address().to_string() + ":" + std::to_string(ep.port());
}

template <class S>
Task<void> HttpServer::ReplyWithoutExchange(S& stream, http::status code, const Status& st, std::string_view remote,
                                            const HeaderList& headers) {
  http::response<http::string_body> res{code, 11};
  for (const auto& [name, value] : headers) res.set(name, value);
  res.set(http::field::content_type, "application/json");
  res.set("X-Content-Type-Options", "nosniff");
  res.body() = AisErrorText(st, code, {}, {}, remote, node_);
  res.keep_alive(false);
  res.prepare_payload();
  beast::error_code ec;
  stream.expires_after(std::chrono::seconds(10));
  co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
}

Task<void> HttpServer::Session(tcp::socket socket, std::string address) {
  // Counted by AcceptLoop (Admit) before the spawn; uncounted here however the session ends.
  struct Uncount {
    HttpServer* server;
    const std::string& address;
    ~Uncount() { server->Release(address); }
  } uncount{this, address};
  const std::string remote = RemoteAddress(socket);
  Stream stream(std::move(socket));
  if (opts_.tls && !co_await Handshake(stream, remote, opts_.header_timeout)) co_return;
  beast::flat_buffer buffer;
  bool unread = false;  // we replied before reading all the client sent
  bool first = true;
  for (;;) {
    RequestParser parser;
    parser.header_limit(static_cast<std::uint32_t>(opts_.header_limit));
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // PUT bodies are streamed
    beast::error_code ec;
    if (buffer.size() == 0) {
      // Idle between requests: wait for the next one's first bytes (a pipelined one may be
      // buffered). A new connection gets no idle time: its first request is due at once.
      stream.expires_after(first ? opts_.header_timeout : opts_.idle_timeout);
      size_t n = co_await stream.async_read_some(buffer.prepare(4096), asio::redirect_error(asio::use_awaitable, ec));
      buffer.commit(n);
      if (ec) break;  // closed, reset or idle too long: nothing to answer
    }
    // A request has begun: its whole header must follow promptly (a slow client holds no slot for long).
    stream.expires_after(opts_.header_timeout);
    co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      // No Exchange exists for a request whose head was not read: the reply is written here,
      // with the same AIS error JSON as every other error, and the connection closes after it.
      if (ec == http::error::header_limit) {
        const Status st = Status::InvalidArgument("request header fields too large (limit " +
                                                  std::to_string(opts_.header_limit) + " bytes)");
        co_await ReplyWithoutExchange(stream, http::status::request_header_fields_too_large, st, remote, kNoHeaders);
        unread = true;
      } else if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
                 ec != asio::error::connection_reset && ec != beast::error::timeout && ec != asio::error::eof &&
                 ec != ssl::error::stream_truncated) {
        const Status st = Status::InvalidArgument("malformed HTTP request: " + ec.message());
        co_await ReplyWithoutExchange(stream, http::status::bad_request, st, remote, kNoHeaders);
        unread = true;
      }
      break;
    }
    if (opts_.tls && IsUnredirectedBodyProbe(parser.get())) {
      co_await RedirectToSelf(stream, parser.get());
      unread = true;  // a client other than the SDK may be sending the body
      break;
    }
    Exchange ex(stream, buffer, parser, node_, remote);
    // Handlers return Status; an exception is a bug that costs its one request, never the process.
    Status failure = Status::IOError("internal error: no reply");
    try {
      co_await handler_(ex);
    } catch (const std::exception& e) {
      failure = Status::IOError(std::string("internal error: ") + e.what());
    } catch (...) {
      failure = Status::IOError("internal error: unknown exception");
    }
    // The reply is built in a named local: GCC 12 destroys a temporary of a conditional
    // expression twice when it sits in a co_await operand (that double free was a remote crash).
    if (!ex.replied()) co_await ex.ReplyError(failure);
    if (!ex.reusable()) break;
    if (!ex.body_done()) {
      // Replied before reading the body (an error): drain it so the client, still sending,
      // reads our reply instead of a reset connection.
      if (!IEquals(ex.header("Expect"), "100-continue") && parser.content_length().value_or(0) <= kDrainLimit) {
        uint64_t drained = 0;
        Status st = co_await ex.StreamBody([&](const char*, size_t n) {
          drained += n;
          return drained > kDrainLimit ? Status::InvalidArgument("too much") : Status::OK();
        });
        if (!st.ok()) {
          unread = true;
          break;
        }
      } else {
        unread = true;
        break;
      }
    }
    if (!parser.get().keep_alive()) break;
    first = false;
  }
  co_await Close(stream, unread);
}

}  // namespace ais
