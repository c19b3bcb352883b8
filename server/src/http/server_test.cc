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

}  // namespace
}  // namespace ais
