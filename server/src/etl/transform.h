// One object through a running ETL (spec etl.md §7.2, §7.3): the request its comm type makes
// of the transformer, the transformed bytes streamed to the caller. Blocking: call off the I/O
// threads.
//
// Objects always travel as bytes, never as a file name (etl_fqn): a stored object's file holds
// its header before the data, and a chunked one is several files. hpush PUTs the bytes; hpull
// names the object and the transformer GETs it from this node (AIS_TARGET_URL, /v1/etl/_object).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "etl/etl_manager.h"
#include "etl/transformer_client.h"
#include "util/status.h"

namespace ais::etl {

struct TransformSource {
  std::string provider;  // "ais", "aws"
  std::string bucket;    // the bucket's name (no provider)
  std::string ns = "@#";  // its namespace's uname (store/bck.h BucketNs::Uname)
  std::string object;
  uint64_t size = 0;
  // Fills `buf` with the object's next bytes (hpush); returns the count.
  std::function<Result<size_t>(char* buf, size_t len)> read;
};

// The AIS uname of an object: "<provider>/@#/<bucket>/<object>".
std::string Uname(const std::string& provider, const std::string& ns, const std::string& bucket,
                  const std::string& object);
// Go's url.PathEscape: every byte but [A-Za-z0-9-._~$&+:=@] percent-encoded ('/' too).
std::string PathEscape(std::string_view s);
// A URL query value, percent-encoded (space as %20).
std::string QueryEscape(std::string_view s);

// The path and query of the hpush PUT of `bucket`/`object` (the bucket's name and the object's,
// as AIS sends them; escaped only where a URL path must be).
std::string HpushTarget(const std::string& bucket, const std::string& object, const std::string& etl_args);
// The Ais-Node-Url header's value: the pipeline's next transformers.
std::string NodeUrlHeader(const std::vector<std::string>& pipeline);

// Sends `src` through `etl` (then through the transformers at `pipeline`, as Ais-Node-Url) and
// streams the result to on_start/on_data. Returns the transformer's status (200, or 204 when it
// delivered the result itself); errors as TransformerClient::Call.
Result<int> Transform(RunningEtl& etl, const TransformSource& src, const std::string& etl_args,
                      const std::vector<std::string>& pipeline, const OnReplyStart& on_start,
                      const OnReplyData& on_data);

}  // namespace ais::etl
