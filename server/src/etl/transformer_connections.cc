#include "etl/transformer_connections.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "etl/transformer_client.h"

namespace ais::etl {

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);

Status TimedOut(std::chrono::milliseconds timeout) {
  return Status::IOError("ETL error: no reply within obj_timeout " + std::to_string(timeout.count()) + "ms");
}

Status TooLong(uint64_t limit) {
  return Status::InvalidArgument("ETL error: the transformer's reply is over " + std::to_string(limit) + " bytes");
}

Status Failed(const boost::system::error_code& ec, std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout) return TimedOut(timeout);
  return Status::IOError("ETL error: " + ec.message());
}

// Errors of a kept connection the transformer closed while it was idle: nothing of the request
// was taken, so sending it again on a new connection is safe.
bool StaleConnection(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::eof;
}

}  // namespace

struct TransformerReply::Connection {
  explicit Connection(const asio::any_io_executor& exec) : stream(exec) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  asio::execution_context* thread = nullptr;  // the io_context it belongs to
};

TransformerReply::TransformerReply(TransformerConnections& owner, std::unique_ptr<Connection> conn,
                                   std::chrono::milliseconds timeout)
    : owner_(owner), conn_(std::move(conn)), timeout_(timeout) {
  // Bounded by the reader (ReadAll's limit, or streamed out). Not boost::none: Boost 1.74's
  // parser compares a Content-Length with it, and every length is more than none.
  parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
}

TransformerReply::~TransformerReply() {
  if (conn_ && !broken_ && parser_.is_done() && parser_.keep_alive()) owner_.PutIdle(std::move(conn_));
}

Task<Result<size_t>> TransformerReply::Read(char* buf, size_t len) {
  while (!parser_.is_done()) {
    auto& body = parser_.get().body();
    body.data = buf;
    body.size = len;
    boost::system::error_code ec;
    co_await http::async_read(conn_->stream, conn_->buffer, parser_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      broken_ = true;
      co_return Failed(ec, timeout_);
    }
    const size_t got = len - parser_.get().body().size;
    if (got > 0) co_return got;
  }
  co_return size_t{0};
}

Task<Result<std::string>> TransformerReply::ReadAll(uint64_t limit) {
  const std::optional<uint64_t> length = content_length();
  if (length && *length > limit) co_return TooLong(limit);
  // A reply of known length lands in place; one without grows (by doubling) up to the limit.
  std::string out(length ? *length : std::min<uint64_t>(limit, 64 << 10), '\0');
  size_t have = 0;
  while (!done()) {
    if (have == out.size()) {
      if (out.size() >= limit) co_return TooLong(limit);
      out.resize(std::min<uint64_t>(limit, 2 * out.size() + 1));
    }
    auto got = co_await Read(out.data() + have, out.size() - have);
    if (!got.ok()) co_return got.status();
    have += *got;
  }
  out.resize(have);
  co_return out;
}

TransformerConnections::TransformerConnections(uint16_t port)
    : endpoint_(asio::ip::make_address_v4("127.0.0.1"), port), host_("127.0.0.1:" + std::to_string(port)) {}

TransformerConnections::~TransformerConnections() = default;

std::unique_ptr<TransformerReply::Connection> TransformerConnections::TakeIdle(asio::execution_context* thread) {
  std::lock_guard lock(mu_);
  auto it = idle_.find(thread);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  auto conn = std::move(it->second.back());
  it->second.pop_back();
  return conn;
}

void TransformerConnections::PutIdle(std::unique_ptr<Connection> conn) {
  conn->stream.expires_never();
  std::lock_guard lock(mu_);
  auto& idle = idle_[conn->thread];
  if (!closed_ && idle.size() < kMaxIdlePerThread) idle.push_back(std::move(conn));
}

void TransformerConnections::CloseIdle() {
  decltype(idle_) closing;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    closing.swap(idle_);
  }
}

Task<Result<std::unique_ptr<TransformerReply>>> TransformerConnections::Send(http::request<http::string_body>& req,
                                                                              std::chrono::milliseconds timeout) {
  auto exec = co_await asio::this_coro::executor;
  asio::execution_context* thread = &asio::query(exec, asio::execution::context);
  req.set(http::field::host, host_);
  req.keep_alive(true);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool replaced_stale = false;
  for (;;) {
    std::unique_ptr<Connection> conn = replaced_stale ? nullptr : TakeIdle(thread);
    const bool kept = conn != nullptr;
    boost::system::error_code ec;
    if (!kept) {
      conn = std::make_unique<Connection>(exec);
      conn->thread = thread;
      for (int attempt = 1;; ++attempt) {
        conn->stream.expires_after(std::min<std::chrono::steady_clock::duration>(kConnectTimeout, timeout));
        co_await conn->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, ec));
        if (ec != asio::error::connection_refused || attempt == kTransformerConnectTries) break;
        asio::steady_timer pause(exec, kTransformerConnectPause);
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        conn->stream.close();
      }
      if (ec) co_return Failed(ec, timeout);
      conn->stream.socket().set_option(tcp::no_delay(true));
    }
    conn->stream.expires_at(deadline);
    co_await http::async_write(conn->stream, req, asio::redirect_error(asio::use_awaitable, ec));
    std::unique_ptr<TransformerReply> reply;
    if (!ec) {
      reply.reset(new TransformerReply(*this, std::move(conn), timeout));
      co_await http::async_read_header(reply->conn_->stream, reply->conn_->buffer, reply->parser_,
                                       asio::redirect_error(asio::use_awaitable, ec));
      if (!ec) co_return reply;
      reply->broken_ = true;
    }
    if (kept && !replaced_stale && StaleConnection(ec)) {
      replaced_stale = true;
      continue;
    }
    co_return Failed(ec, timeout);
  }
}

}  // namespace ais::etl
