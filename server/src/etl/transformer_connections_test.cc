#include "etl/transformer_connections.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace ais::etl {
namespace {

// A stand-in transformer on 127.0.0.1: accepts connections one after another and answers each
// request on it with `answer(request body)` (a whole HTTP reply), or closes the connection when
// that is empty. Counts the connections it accepted.
class FakeTransformer {
 public:
  explicit FakeTransformer(std::function<std::string(const std::string&)> answer)
      : acceptor_(ctx_, tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)), answer_(std::move(answer)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeTransformer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(ctx_);
    poke.connect(acceptor_.local_endpoint(), ec);  // wakes the accept
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int accepted() const { return accepted_.load(); }

 private:
  void Run() {
    while (!stop_) {
      tcp::socket s(ctx_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stop_) return;
      ++accepted_;
      beast::flat_buffer buf;
      for (;;) {
        http::request<http::string_body> req;
        http::read(s, buf, req, ec);
        if (ec) break;
        const std::string reply = answer_(req.body());
        if (reply.empty()) break;
        asio::write(s, asio::buffer(reply), ec);
        if (ec) break;
      }
    }
  }

  asio::io_context ctx_;
  tcp::acceptor acceptor_;
  std::function<std::string(const std::string&)> answer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
};

std::string Ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One PUT of `body` through `conns` and its whole reply (limit 1 MiB), run to completion on an
// io_context of its own (as an I/O thread runs one).
struct Outcome {
  Status status;
  int http_status = 0;
  std::string body;
};
Outcome Put(TransformerConnections& conns, asio::io_context& ctx, const std::string& body,
            std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  Outcome out;
  asio::co_spawn(
      ctx,
      [&]() -> Task<void> {
        http::request<http::string_body> req{http::verb::put, "/b/o", 11};
        req.body() = body;
        req.prepare_payload();
        auto reply = co_await conns.Send(req, timeout);
        if (!reply.ok()) {
          out.status = reply.status();
          co_return;
        }
        out.http_status = (*reply)->status();
        auto all = co_await (*reply)->ReadAll(1 << 20);
        if (!all.ok()) {
          out.status = all.status();
          co_return;
        }
        out.body = std::move(*all);
      },
      asio::detached);
  ctx.restart();
  ctx.run();
  return out;
}

TEST(TransformerConnections, KeepsTheConnectionAcrossRequests) {
  FakeTransformer t([](const std::string& body) { return Ok("<" + body + ">"); });
  asio::io_context ctx;  // outlives the connections kept in conns
  TransformerConnections conns(t.port());
  for (const std::string body : {"a", "bc", ""}) {
    Outcome o = Put(conns, ctx, body);
    ASSERT_TRUE(o.status.ok()) << o.status.message();
    EXPECT_EQ(o.http_status, 200);
    EXPECT_EQ(o.body, "<" + body + ">");
  }
  EXPECT_EQ(t.accepted(), 1);
}

TEST(TransformerConnections, ReadsAChunkedReply) {
  FakeTransformer t([](const std::string&) {
    return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  });
  asio::io_context ctx;
  TransformerConnections conns(t.port());
  Outcome o = Put(conns, ctx, "x");
  ASSERT_TRUE(o.status.ok()) << o.status.message();
  EXPECT_EQ(o.body, "abcde");
}

TEST(TransformerConnections, ReplacesAConnectionTheTransformerClosed) {
  std::atomic<int> served{0};
  // Answers one request per connection, then closes it (as a restarted transformer would).
  FakeTransformer t([&](const std::string& body) { return served++ % 2 == 0 ? Ok(body) : std::string(); });
  asio::io_context ctx;
  TransformerConnections conns(t.port());
  ASSERT_TRUE(Put(conns, ctx, "one").status.ok());
  Outcome o = Put(conns, ctx, "two");
  ASSERT_TRUE(o.status.ok()) << o.status.message();
  EXPECT_EQ(o.body, "two");
  EXPECT_EQ(t.accepted(), 2);
}

TEST(TransformerConnections, ErrorReplyKeepsItsStatusAndBody) {
  FakeTransformer t([](const std::string&) {
    return std::string("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom");
  });
  asio::io_context ctx;
  TransformerConnections conns(t.port());
  Outcome o = Put(conns, ctx, "x");
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.http_status, 500);
  EXPECT_EQ(o.body, "boom");
}

TEST(TransformerConnections, NoReplyWithinTheTimeout) {
  std::atomic<bool> release{false};
  FakeTransformer t([&](const std::string&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return std::string();
  });
  asio::io_context ctx;
  TransformerConnections conns(t.port());
  Outcome o = Put(conns, ctx, "x", std::chrono::milliseconds(200));
  release = true;
  EXPECT_TRUE((o.status.code() == Status::Code::kIOError));
  EXPECT_EQ(o.status.message(), "ETL error: no reply within obj_timeout 200ms");
}

TEST(TransformerConnections, ReplyOverTheLimitIsRefused) {
  FakeTransformer t([](const std::string&) { return Ok(std::string((1 << 20) + 1, 'x')); });
  asio::io_context ctx;
  TransformerConnections conns(t.port());
  Outcome o = Put(conns, ctx, "x");
  EXPECT_TRUE((o.status.code() == Status::Code::kInvalidArgument)) << o.status.message();
}

TEST(TransformerConnections, NothingListening) {
  uint16_t port = 0;
  {
    asio::io_context c;
    tcp::acceptor a(c, tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
    port = a.local_endpoint().port();
  }  // closed: connections to it are refused
  asio::io_context ctx;
  TransformerConnections conns(port);
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o = Put(conns, ctx, "x");
  EXPECT_TRUE((o.status.code() == Status::Code::kIOError));
  EXPECT_TRUE(o.status.message().starts_with("ETL error: ")) << o.status.message();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(550));  // retried twice, 0.3 s apart
}

}  // namespace
}  // namespace ais::etl
