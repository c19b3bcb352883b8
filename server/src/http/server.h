// HttpServer: the accept loop and one coroutine per connection (read -> handle -> reply -> read).
// Each worker thread runs its own io_context; connections are dealt round-robin and never move,
// so a connection's state needs no locking.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/asio.h"
#include "http/exchange.h"

namespace ais {

using Handler = std::function<Task<void>(Exchange&)>;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0: ephemeral
  size_t threads = 0;    // 0: two per CPU, at least 4
  size_t header_limit = 64 << 10;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, NodeInfo node, Handler handler);
  ~HttpServer();

  // Binds the listening socket. Returns the bound port.
  Result<uint16_t> Bind();
  // Runs until Stop() (or SIGINT/SIGTERM when handle_signals).
  void Run(bool handle_signals);
  void Stop();

 private:
  Task<void> AcceptLoop();
  Task<void> Session(tcp::socket socket);

  const HttpServerOptions opts_;
  const NodeInfo node_;
  const Handler handler_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::atomic<size_t> next_{0};
};

}  // namespace ais
