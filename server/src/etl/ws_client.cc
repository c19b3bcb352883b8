#include "etl/ws_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace ais::etl {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;

constexpr size_t kMaxIdle = 64;
constexpr uint64_t kReadLimit = 16ULL << 30;  // AIS: 16 GiB

// Send and receive time limits of a blocking socket (a read past them fails with EAGAIN).
void SetDeadline(tcp::socket& s, std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

}  // namespace

struct WsClient::Conn {
  asio::io_context io;
  websocket::stream<tcp::socket> ws{io};
};

WsClient::WsClient(std::string host, uint16_t port) : host_(std::move(host)), port_(port) {}

WsClient::~WsClient() = default;

Result<std::unique_ptr<WsClient::Conn>> WsClient::Connect(std::chrono::milliseconds timeout) {
  auto c = std::make_unique<Conn>();
  beast::error_code ec;
  tcp::endpoint ep(asio::ip::make_address(host_, ec), port_);
  if (ec) return Status::InvalidArgument("ETL ws: bad address " + host_);
  c->ws.next_layer().connect(ep, ec);
  if (ec) return Status::IOError("ETL error: ws connect " + host_ + ":" + std::to_string(port_) + ": " + ec.message());
  SetDeadline(c->ws.next_layer(), timeout);
  c->ws.next_layer().set_option(tcp::no_delay(true), ec);
  c->ws.read_message_max(kReadLimit);
  c->ws.handshake(host_ + ":" + std::to_string(port_), "/ws", ec);
  if (ec) return Status::IOError("ETL error: ws handshake: " + ec.message());
  c->ws.binary(true);
  return c;
}

Result<WsReply> WsClient::Transform(const std::string& control, const std::string& data,
                                    std::chrono::milliseconds timeout) {
  std::unique_ptr<Conn> c;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!c) {
    auto made = Connect(timeout);
    if (!made.ok()) return made.status();
    c = std::move(*made);
  }
  SetDeadline(c->ws.next_layer(), timeout);
  beast::error_code ec;
  c->ws.write(asio::buffer(control), ec);
  if (!ec) c->ws.write(asio::buffer(data), ec);
  beast::flat_buffer buf;
  if (!ec) c->ws.read(buf, ec);
  if (ec) {
    // The connection is dropped with `c`: a reply may still come on it for this object.
    if (ec == beast::error::timeout || ec == asio::error::would_block || ec == asio::error::try_again) {
      return Status::IOError("ETL error: no reply within obj_timeout " + std::to_string(timeout.count()) + "ms");
    }
    return Status::IOError("ETL error: ws: " + ec.message());
  }
  WsReply r;
  r.body = beast::buffers_to_string(buf.data());
  r.delivered = c->ws.got_text();
  if (r.delivered && r.body.starts_with("Transform error")) return Status::IOError("ETL error: " + r.body);
  {
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
  }
  return r;
}

}  // namespace ais::etl
