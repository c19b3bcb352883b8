// LinkFetch: one file of a download job: an HTTP(S) GET of a link (libcurl) streamed into a
// sink (an ObjectWriter, or a spool an ETL reads) and committed. The object appears complete or
// not at all: a body cut short, a stall past the deadline, an error status, a full disk or an
// abort commit nothing (the writer's invariant, store/object_writer.h). Every connection,
// redirects included, goes through the egress guard on its resolved address. Blocking: runs on a
// download job's worker thread.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "download/byte_throttle.h"
#include "download/egress_guard.h"
#include "store/store.h"
#include "util/status.h"

namespace ais {

struct LinkFetchOptions {
  EgressPolicy egress;
  std::chrono::milliseconds timeout{3'600'000};  // the whole transfer
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // sent with the GET
  ByteThrottle* throttle = nullptr;    // null: no byte limit
  std::function<bool()> aborted;       // true: stop now (nothing committed)
  std::atomic<int64_t>* downloaded = nullptr;  // bytes received so far (progress; reset per attempt)
  std::atomic<int64_t>* total = nullptr;       // Content-Length when known
};

// How an attempt failed: `retry` when another attempt may succeed (a connection error, a cut-off
// body, a timeout, 5xx, 429), `timed_out` when the deadline passed.
struct FetchFailure {
  bool retry = false;
  bool timed_out = false;
};

// Where the body of one attempt goes: opened at its first byte (or at the end of an empty body)
// with what the reply says of the file, committed once the body is complete. A sink destroyed
// uncommitted leaves nothing behind (a failed attempt's).
class FetchSink {
 public:
  virtual ~FetchSink() = default;
  // `size`: the Content-Length, when the reply gives one; `custom`: SourceMetadata, sorted.
  virtual Status Open(std::optional<uint64_t> size, std::vector<std::pair<std::string, std::string>> custom) = 0;
  virtual Status Write(const char* data, size_t len) = 0;
  virtual Result<ObjectMeta> Commit() = 0;
};

// The sink of a plain download: object `name` of `bucket` (a store key), as fetched.
std::unique_ptr<FetchSink> ObjectSink(Store& store, std::string bucket, std::string name);

// GETs `link` into `sink` and commits it. On success the object's metadata; its custom metadata
// says where it came from as AIS's downloader records it (SourceMetadata). `curl`: a handle
// from CurlHandles, reset by the caller's pool.
Result<ObjectMeta> FetchLink(CURL* curl, const std::string& link, const LinkFetchOptions& opts, FetchSink& sink,
                             FetchFailure* failure);

// HEAD of `link` (5 s, the egress guard on): its Content-Length and the metadata FetchLink would
// record; kNotFound-like statuses as errors. For the skip check of an existing object.
struct LinkHead {
  int64_t size = -1;
  std::vector<std::pair<std::string, std::string>> custom;
};
Result<LinkHead> HeadLink(CURL* curl, const std::string& link, const EgressPolicy& egress,
                          const std::vector<std::pair<std::string, std::string>>* headers);

// The custom metadata AIS's downloader keeps for a file from `link` (ext/dload attrsFromLink):
// `source` = aws / gcp / azure by the link's host (s3 / storage.googleapis.com /
// *.blob.core.windows.net), else "web"; with version, ETag and MD5 from the reply's headers where
// that backend gives them. `header(name)` returns a reply header ("" when absent).
std::vector<std::pair<std::string, std::string>> SourceMetadata(
    const std::string& link, const std::function<std::string(std::string_view)>& header);

}  // namespace ais
