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
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

struct LinkFetchOptions {
  EgressPolicy egress;
  std::chrono::milliseconds timeout{3'600'000};  // the whole transfer
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // sent with the GET
  ByteThrottle* throttle = nullptr;    // null: no byte limit
  std::function<bool()> aborted;       // true: stop now (nothing committed)
  std::atomic<int64_t>* downloaded = nullptr;  // bytes received so far (progress; reset per attempt)
  std::atomic<int64_t>* total = nullptr;       // the file's size when known
  // >0: ask for the file's first `first_range` bytes only (Range). A server that answers 206 for
  // a longer file says so to the sink (FetchedReply::total), which fetches the rest as ranges;
  // a smaller file comes whole either way, so asking costs nothing.
  uint64_t first_range = 0;
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
// What a reply says of the file, for the sink.
struct FetchedReply {
  std::optional<uint64_t> length;  // this reply's Content-Length, when given
  // A 206: its bytes are [first, first + length) of a file of `total` bytes.
  bool partial = false;
  uint64_t first = 0;
  uint64_t total = 0;
  std::string etag;  // the reply's ETag, as sent ("" when none)
  std::vector<std::pair<std::string, std::string>> custom;  // SourceMetadata, sorted
};

class FetchSink {
 public:
  virtual ~FetchSink() = default;
  virtual Status Open(FetchedReply reply) = 0;
  virtual Status Write(const char* data, size_t len) = 0;
  virtual Result<ObjectMeta> Commit() = 0;
};

// How a file whose first reply was its first range (206) gets the rest: `workers` threads, each
// GETting `part_size` ranges of `link` on a handle of `curls`, with `opts` (the guard, headers,
// deadline, abort, byte limit, progress); every range must come from the same file (its total
// and ETag), so a file that changes mid-way fails rather than mixes.
struct RangeFetch {
  CurlHandles* curls = nullptr;
  std::string link;
  const LinkFetchOptions* opts = nullptr;
  uint64_t part_size = 0;
  int workers = 1;
};

// The sink of a plain download: object `name` of `bucket` (a store key), as fetched. With
// `ranges`, a file the first reply says is longer becomes a multipart upload: the first reply is
// part 1, the rest are fetched per `ranges`, and the object appears when every part is there.
// `through`: a remote bucket's write-through, run before the commit (AIS's OWT put: the backend
// first, then the local copy); empty for an ais:// bucket.
std::unique_ptr<FetchSink> ObjectSink(Store& store, std::string bucket, std::string name,
                                      std::optional<RangeFetch> ranges = std::nullopt,
                                      WriteThroughFn through = {});

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
