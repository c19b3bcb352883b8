#include "http/server.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

namespace ais {
namespace {

// One request on a fresh connection; returns the status and body of the reply.
std::pair<int, std::string> Get(uint16_t port, const std::string& target) {
  asio::io_context io;
  tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {static_cast<int>(res.result_int()), res.body()};
}

struct FullReply {
  int code = 0;
  std::string body;
  http::fields headers;
};

// One request on a fresh connection; the whole reply, headers included.
FullReply Send(uint16_t port, http::verb method, const std::string& target) {
  asio::io_context io;
  tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  http::request<http::empty_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> p;
  p.skip(method == http::verb::head);
  http::read(sock, buf, p);
  FullReply out;
  out.code = static_cast<int>(p.get().result_int());
  out.body = p.get().body();
  for (const auto& f : p.get()) out.headers.insert(f.name_string(), f.value());
  return out;
}

class ServerGuardTest : public ::testing::Test {
 protected:
  void StartServer(Handler handler) {
    HttpServerOptions opts;
    opts.host = "127.0.0.1";
    opts.port = 0;
    opts.threads = 2;
    server_ = std::make_unique<HttpServer>(opts, NodeInfo{"t[test]", "test"}, std::move(handler));
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(false); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }

  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

// A handler that throws (a bug) costs its one request a 500; the process and the other
// connections go on. Under ASan this also proves the error path frees nothing twice.
TEST_F(ServerGuardTest, ThrowingHandlerCostsOneRequest) {
  StartServer([](Exchange& ex) -> Task<void> {
    if (ex.raw_path() == "/throw") throw std::runtime_error("boom");
    if (ex.raw_path() == "/throw-int") throw 42;
    if (ex.raw_path() == "/silent") co_return;  // forgets to reply
    co_await ex.Reply(http::status::ok, {}, "fine", "text/plain");
  });
  for (int i = 0; i < 3; ++i) {
    auto [code, body] = Get(port_, "/throw");
    EXPECT_EQ(code, 500);
    EXPECT_NE(body.find("internal error: boom"), std::string::npos) << body;
    std::tie(code, body) = Get(port_, "/throw-int");
    EXPECT_EQ(code, 500);
    EXPECT_NE(body.find("unknown exception"), std::string::npos) << body;
    std::tie(code, body) = Get(port_, "/silent");
    EXPECT_EQ(code, 500);
    EXPECT_NE(body.find("no reply"), std::string::npos) << body;
    std::tie(code, body) = Get(port_, "/ok");
    EXPECT_EQ(code, 200);
    EXPECT_EQ(body, "fine");
  }
}

// The error reply: the AIS code rides on the Status (kBucketNotFound names ErrBckNotFound in
// "tcode"; the message text decides nothing), headers staged by AddErrorHeader go out with it,
// and HEAD carries the JSON in Hdr-Error.
TEST_F(ServerGuardTest, ErrorReplyTakesCodeAndHeadersFromTheExchange) {
  StartServer([](Exchange& ex) -> Task<void> {
    if (ex.raw_path() == "/bucket") {
      co_await ex.ReplyError(Status::BucketNotFound("bucket \"ais://b\" does not exist"));
    } else if (ex.raw_path() == "/lookalike") {
      co_await ex.ReplyError(Status::NotFound("bucket \"ais://b\" does not exist"));
    } else {
      ex.AddErrorHeader("Content-Range", "bytes */5");
      co_await ex.ReplyError(Status::RangeNotSatisfiable("out of range"));
    }
  });
  FullReply r = Send(port_, http::verb::get, "/bucket");
  EXPECT_EQ(r.code, 404);
  EXPECT_NE(r.body.find(R"("tcode":"ErrBckNotFound")"), std::string::npos) << r.body;
  r = Send(port_, http::verb::head, "/bucket");
  EXPECT_EQ(r.code, 404);
  EXPECT_TRUE(r.body.empty());
  EXPECT_NE(std::string(r.headers["Hdr-Error"]).find(R"("tcode":"ErrBckNotFound")"), std::string::npos);
  r = Send(port_, http::verb::get, "/lookalike");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(r.body.find("tcode"), std::string::npos) << r.body;
  r = Send(port_, http::verb::get, "/range");
  EXPECT_EQ(r.code, 416);
  EXPECT_EQ(r.headers["Content-Range"], "bytes */5");
  EXPECT_EQ(r.headers["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(r.headers[http::field::content_type], "application/json");
}

// A streamed reply is written and ended through its StreamReply (chunked: the client reads the
// whole body only once End sent the last chunk).
TEST_F(ServerGuardTest, StreamReplyEndsTheReply) {
  StartServer([](Exchange& ex) -> Task<void> {
    StreamReply out = co_await ex.BeginStream(http::status::ok, {}, "text/plain", std::nullopt);
    std::string text = "streamed";
    BodyPiece piece;
    piece.data = text.data();
    piece.len = text.size();
    std::vector<BodyPiece> body = {piece};
    bool alive = co_await out.Write(body);
    Replied done = co_await out.End(alive);
    (void)done;
  });
  FullReply r = Send(port_, http::verb::get, "/whole");
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.body, "streamed");
}

TEST(HandledTest, OkStatusIsAHandlerThatNeverReplied) {
  Handled h(Status::OK());
  EXPECT_FALSE(h.replied());
  EXPECT_EQ(h.status().code(), Status::Code::kIOError);
  Handled err(Status::BucketNotFound("bucket"));
  EXPECT_FALSE(err.replied());
  EXPECT_TRUE(err.status().IsNotFound());
  EXPECT_EQ(Exchange::HttpStatusFor(err.status()), http::status::not_found);
}

}  // namespace
}  // namespace ais
