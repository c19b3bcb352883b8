// MossRequest: the GetBatch request body (AIS apc.MossReq / apc.MossIn, getbatch.md §2), parsed
// and validated. Wire facts only; no I/O.
//
// A batch may hold hundreds of thousands of items, so the parse is a SAX pass (no JSON DOM) and
// every item's strings live in one arena: an item costs ~48 bytes plus its names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais {

struct MossBucket {
  std::string provider;  // normalized: "ais", "aws", "gcp", "azure", "oci"
  std::string name;
  bool operator==(const MossBucket&) const = default;
  // "ais://name" (the bucket's cname in messages).
  std::string Cname() const { return provider + "://" + name; }
};

// A span of MossRequest's string arena.
struct ArenaRef {
  uint32_t off = 0;
  uint32_t len = 0;
};

struct MossItem {
  uint32_t bucket = 0;  // index into MossRequest::buckets
  ArenaRef objname;
  ArenaRef archpath;  // empty: the object itself
  ArenaRef opaque;    // decoded bytes, echoed back in MossOut
  int64_t start = 0;
  int64_t length = 0;  // 0: whole; > 0: exactly; -1: to the end
};

class MossRequest {
 public:
  std::string mime;
  bool coer = false;  // continue on error: missing items become placeholders
  bool onob = false;  // entry names without the bucket
  bool strm = false;  // streaming (plain archive) vs multipart (metadata + archive)
  std::vector<MossBucket> buckets;  // distinct buckets the items name
  std::vector<MossItem> items;

  std::string_view str(ArenaRef r) const { return std::string_view(arena_).substr(r.off, r.len); }
  std::string_view objname(const MossItem& it) const { return str(it.objname); }
  std::string_view archpath(const MossItem& it) const { return str(it.archpath); }
  std::string_view opaque(const MossItem& it) const { return str(it.opaque); }
  const MossBucket& bucket(const MossItem& it) const { return buckets[it.bucket]; }

  // Appends an item of a request the server builds itself. REQUIRES: bucket < buckets.size().
  void AddItem(uint32_t bucket, std::string_view objname, std::string_view archpath);

 private:
  friend class MossParser;
  ArenaRef Put(std::string_view s);
  std::string arena_;
};

// Parses the body. `default_bucket` comes from the URL path (`/v1/ml/moss/<bucket>`) with the
// provider of the query, or is nullopt. Errors are kInvalidArgument with AIS's wording
// (`moss: empty input`, `missing bucket specification for object "x"`, range errors, names);
// more than `max_items` items is an error too.
Result<MossRequest> ParseMossRequest(std::string_view body, const std::optional<MossBucket>& default_bucket,
                                     size_t max_items = SIZE_MAX);

// "" -> "ais"; s3 -> aws, gs -> gcp, az -> azure, oc -> oci; unknown -> kInvalidArgument.
Result<std::string> NormalizeProvider(std::string_view provider);

}  // namespace ais
