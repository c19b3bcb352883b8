// LinkFetch: one file of a download job: an HTTP(S) GET of a link (libcurl) streamed into an
// ObjectWriter and committed. The object appears complete or not at all: a body cut short, a
// stall past the deadline, an error status, a full disk or an abort commit nothing (the writer's
// invariant, store/object_writer.h). Every connection, redirects included, goes through the
// egress guard on its resolved address. Blocking: runs on a download job's worker thread.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
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

// GETs `link` into object `name` of `bucket` (a store key). On success the object's metadata;
// its custom metadata says where it came from as AIS's downloader records it (SourceMetadata).
// `curl`: a handle from CurlHandles, reset by the caller's pool.
Result<ObjectMeta> FetchLink(CURL* curl, Store& store, const std::string& bucket, const std::string& name,
                             const std::string& link, const LinkFetchOptions& opts, FetchFailure* failure);

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
