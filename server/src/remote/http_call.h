// HttpCall: one request of a cloud backend client (S3Client, GcsClient, AzureClient) over
// libcurl, with the retry policy they share. The client fills in the request and says how a
// non-2xx reply maps to a Status; PerformHttp sends it on a pooled handle, streams a GET's body
// to the caller, keeps other bodies (bounded) for the client to parse, and retries idempotent
// trouble.
//
// Retries (bounded, with backoff): transport errors, 429, 500, 502, 503 and 504; a GET only while
// no byte of it has reached the caller; a PUT only when its body can be rewound.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remote/backend.h"
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

struct HttpCall {
  using Headers = std::vector<std::pair<std::string, std::string>>;  // names lower-cased

  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::string what;  // what messages name: "s3://b/o"
  std::vector<std::string> headers;  // "Name: value"
  // Auth (and other) options of each attempt on its handle, e.g. SigV4 signing.
  std::function<void(CURL*)> configure;
  // PUT body: `upload_size` bytes from `body`; `rewind` restarts it for a retry (none: no retry).
  std::optional<uint64_t> upload_size;
  const RemoteBackend::ReadBody* body = nullptr;
  const std::function<Status()>* rewind = nullptr;
  // POST body (small documents).
  std::string post_body;
  // A 2xx body for the caller: `on_headers` once before its first byte (or at the end of an
  // empty one), then `on_data` with the bytes. Without on_data the body is kept in resp_body.
  std::function<Status(const Headers&)> on_headers;
  const RemoteBackend::OnData* on_data = nullptr;

  // The last attempt's reply.
  long status = 0;
  Headers resp_headers;
  std::string resp_body;  // a body that is not the caller's (a document, an error), bounded

  const std::string* Header(std::string_view name) const;  // `name` lower-case

  // Attempt state (PerformHttp's).
  std::string_view error_prefix;
  bool delivered = false;  // bytes went to on_data: no retry from here on
  bool headers_done = false;
  Status callback_status;
};

// Maps a non-2xx reply (status, headers, bounded body) to the error the caller gets.
using HttpErrorOf = std::function<Status(const HttpCall&)>;

// Performs `call` on a handle of `handles`: OK on a 2xx reply; a transport failure is
// kIOError "<error_prefix>[<curl's words>] (<what>; <describe>)"; any other reply is error_of's.
Status PerformHttp(CurlHandles& handles, HttpCall& call, std::string_view error_prefix, std::string_view describe,
                   const HttpErrorOf& error_of);

// Every byte but A-Z a-z 0-9 - _ . ~ as %XX (RFC 3986 unreserved kept): AWS's query values, and
// a GCS object name in a path or query.
std::string PercentEncode(std::string_view v);

// A backend's error reply as a Status of the class its HTTP status says (400 kInvalidArgument,
// 401, 403, 409, 412, 416, 429, 503 their own; any other kIOError), with `text` as the message.
Status BackendStatus(int http_status, std::string text);

}  // namespace ais
