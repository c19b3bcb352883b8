// The ws:// transformer protocol (spec etl.md §7.4), as a target speaks it: per object a binary
// control message ({"fqn","path","etl_args","pipeline"}, keys omitted when empty), then the
// object's bytes as a binary message (no fqn here: objects travel as bytes); one reply per
// object, in order: binary = the transformed bytes, text = delivered elsewhere (direct put).
// Connections to `ws://host:port/ws` are kept and reused, one object at a time each. Blocking
// (Boost.Beast's synchronous WebSocket): call off the I/O threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "util/status.h"

namespace ais::etl {

struct WsReply {
  bool delivered = false;  // a text reply: the transformer put the result elsewhere
  std::string body;        // the transformed bytes (binary reply)
};

class WsClient {
 public:
  WsClient(std::string host, uint16_t port);
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  // One object: `control` (the JSON control message) and `data`; the reply within `timeout`.
  // A text reply that starts with "Transform error" is the transformer's failure (kIOError
  // "ETL error: ..."); a timeout or a broken connection is kIOError naming it (the connection is
  // dropped).
  Result<WsReply> Transform(const std::string& control, const std::string& data, std::chrono::milliseconds timeout);

 private:
  struct Conn;
  Result<std::unique_ptr<Conn>> Connect(std::chrono::milliseconds timeout);

  const std::string host_;
  const uint16_t port_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_;  // guarded by mu_
};

}  // namespace ais::etl
