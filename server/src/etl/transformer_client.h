// HTTP calls from the server to one transformer (spec etl.md §7): the object pushed (hpush: PUT
// /<bucket>/<object>) or named (hpull: GET /<escaped uname>), the reply streamed back. libcurl,
// with a pool of easy handles so connections to the transformer are kept alive across calls and
// threads. Blocking: call off the I/O threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/curl_handles.h"
#include "util/status.h"

namespace ais::etl {

// A transformer that refuses a connection (starting, or restarting) is tried this many times,
// this far apart, by either client (this one and TransformerConnections).
inline constexpr int kTransformerConnectTries = 3;
inline constexpr std::chrono::milliseconds kTransformerConnectPause{300};

struct TransformCall {
  std::string method;  // "PUT" (hpush) or "GET" (hpull)
  std::string path_and_query;  // "/bck/obj?etl_args=..." (already escaped)
  std::vector<std::pair<std::string, std::string>> headers;
  // The body of a PUT: its size and a reader that fills `buf` with the next bytes (the count).
  uint64_t body_size = 0;
  std::function<Result<size_t>(char* buf, size_t len)> read_body;
  std::chrono::milliseconds timeout{10'000};  // the ETL's obj_timeout: the whole call
};

// Called once, before any byte of a successful (2xx) reply, with its status and length if sent.
using OnReplyStart = std::function<Status(int status, std::optional<uint64_t> length)>;
using OnReplyData = std::function<Status(const char*, size_t)>;

// A transformer's error reply as a Status: "ETL error: <its body>", kNotFound for 404,
// kTooManyRequests for 429, kUnavailable for 503, kInvalidArgument for other 4xx, kIOError for 5xx.
Status TransformerError(long status, const std::string& body);

class TransformerClient {
 public:
  explicit TransformerClient(std::string base_url);  // "http://127.0.0.1:PORT"
  ~TransformerClient();
  TransformerClient(const TransformerClient&) = delete;
  TransformerClient& operator=(const TransformerClient&) = delete;

  const std::string& base_url() const { return base_url_; }

  // The reply's status. A 2xx body goes to `on_data` after `on_start`; an error status (>= 400)
  // is returned as a Status of that class whose message is "ETL error: <the transformer's
  // body>" (kNotFound for 404, kInvalidArgument for other 4xx, kIOError for 5xx). A transport
  // failure or a timeout is kIOError naming it; a refused connection is retried (3 times, 0.3 s apart)
  // while nothing was sent.
  Result<int> Call(const TransformCall& call, const OnReplyStart& on_start, const OnReplyData& on_data);
  // GET /health within `timeout`: OK when it answers 200.
  Status Health(std::chrono::milliseconds timeout);

 private:
  std::string base_url_;
  std::unique_ptr<CurlHandles> handles_;
};

}  // namespace ais::etl
