#include "http/server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "util/file.h"

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

// Connects, sends `raw` as it is and reads until the server closes (a 5 s receive timeout
// each read: a server that neither replies nor closes fails the caller's checks instead of
// hanging the test). Returns everything received.
std::string RawExchange(uint16_t port, const std::string& raw, tcp::socket* keep = nullptr) {
  asio::io_context io;
  tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  timeval tv{5, 0};
  ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  asio::write(sock, asio::buffer(raw));
  std::string got;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(sock.native_handle(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  if (keep) *keep = std::move(sock);
  return got;
}

// The status code and JSON body of a raw reply read by RawExchange.
std::pair<int, nlohmann::json> ParseRawReply(const std::string& raw) {
  auto head_end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || head_end == std::string::npos) return {0, nullptr};
  return {std::atoi(raw.substr(9, 3).c_str()), nlohmann::json::parse(raw.substr(head_end + 4), nullptr, false)};
}

std::set<std::string> Keys(const nlohmann::json& j) {
  std::set<std::string> out;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  }
  return out;
}

class ServerGuardTest : public ::testing::Test {
 protected:
  void StartServer(RequestHandler handler, size_t max_connections = 8192) {
    HttpServerOptions opts;
    opts.host = "127.0.0.1";
    opts.port = 0;
    opts.threads = 2;
    opts.header_limit = 1024;
    opts.max_connections = max_connections;
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

// Replies made before any Exchange exists (a header section over the limit: 431; a request the
// parser refuses: 400; a connection over the limit: 503) carry the same AIS error JSON as
// Exchange::ReplyError, and the connection closes after them.
TEST_F(ServerGuardTest, RepliesWithoutExchangeCarryTheAisErrorJson) {
  StartServer([](Exchange& ex) -> Task<void> { co_await ex.ReplyError(Status::NotFound("no such thing")); });
  auto [code, normal] = ParseRawReply(RawExchange(port_, "GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"));
  ASSERT_EQ(code, 404);
  const std::set<std::string> keys = Keys(normal);
  EXPECT_EQ(keys, (std::set<std::string>{"message", "method", "url_path", "remote_addr", "caller", "node", "status"}));

  std::string big = "GET /x HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n";
  auto [code431, j431] = ParseRawReply(RawExchange(port_, big));
  EXPECT_EQ(code431, 431);
  EXPECT_EQ(Keys(j431), keys) << j431.dump();
  EXPECT_EQ(j431.value("status", 0), 431);
  EXPECT_EQ(j431.value("node", ""), "t[test]");
  EXPECT_NE(j431.value("message", "").find("header fields too large"), std::string::npos) << j431.dump();

  auto [code400, j400] = ParseRawReply(RawExchange(port_, "GET /x HTTP/1.1\r\nBad Header\r\n\r\n"));
  EXPECT_EQ(code400, 400);
  EXPECT_EQ(Keys(j400), keys) << j400.dump();
  EXPECT_EQ(j400.value("status", 0), 400);
  EXPECT_NE(j400.value("message", "").find("malformed HTTP request"), std::string::npos) << j400.dump();
}

TEST_F(ServerGuardTest, RefusedConnectionGetsTheAisErrorJson) {
  StartServer([](Exchange& ex) -> Task<void> { co_await ex.Reply(http::status::ok, {}, "ok", "text/plain"); }, 1);
  asio::io_context io;
  tcp::socket held(io);  // the one connection the limit allows, kept open
  held.connect({asio::ip::make_address("127.0.0.1"), port_});
  std::string raw;
  for (int i = 0; i < 100; ++i) {  // the held connection is counted once its session starts
    raw = RawExchange(port_, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    if (ParseRawReply(raw).first == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto [code, j] = ParseRawReply(raw);
  EXPECT_EQ(code, 503) << raw;
  EXPECT_NE(raw.find("Retry-After: 1"), std::string::npos) << raw;
  EXPECT_EQ(j.value("status", 0), 503) << j.dump();
  EXPECT_NE(j.value("message", "").find("too many connections"), std::string::npos) << j.dump();
}

// ReplyFile over a file shorter than the segments say (a chunk truncated under the server):
// a small reply is read before anything is sent, so it fails as a normal error reply and the
// connection serves on; a large one has sent its header, so the connection closes after the
// bytes there are and the client sees a body short of its Content-Length, never a hang.
TEST_F(ServerGuardTest, ReplyFileOverAShortFileNeverHangs) {
  char path[] = "/tmp/ais-short-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  UniqueFd file(fd);
  const std::string have(100 << 10, 'x');  // 100 KiB on disk
  ASSERT_EQ(::write(fd, have.data(), have.size()), static_cast<ssize_t>(have.size()));
  StartServer([fd](Exchange& ex) -> Task<void> {
    uint64_t claimed = ex.raw_path() == "/small" ? 32 << 10 : 1 << 20;
    uint64_t offset = ex.raw_path() == "/small" ? (100 << 10) - 1000 : 0;  // 1000 bytes left there
    const std::vector<FileSegment> segments = {FileSegment{fd, offset, claimed}};
    Handled h = co_await ex.ReplyFile(http::status::ok, {}, segments, claimed);
    if (!h.replied()) co_await ex.ReplyError(h.status());
  });
  std::string small = RawExchange(port_, "GET /small HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  auto [code, j] = ParseRawReply(small);
  EXPECT_EQ(code, 500) << small.substr(0, 300);
  EXPECT_EQ(j.value("status", 0), 500) << small.substr(0, 300);

  // Keep-alive asked for: only the server closing the connection ends the read.
  auto t0 = std::chrono::steady_clock::now();
  std::string large = RawExchange(port_, "GET /large HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4)) << "the server kept the connection";
  EXPECT_EQ(large.substr(0, 12), "HTTP/1.1 200");
  EXPECT_NE(large.find("Content-Length: 1048576"), std::string::npos);
  auto body = large.size() - (large.find("\r\n\r\n") + 4);
  EXPECT_EQ(body, have.size());
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
