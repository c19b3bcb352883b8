// Rewriter: the objects made out of an existing object's bytes - a copy, a rewrite in place
// (rechunk, custom metadata) - and appends.
//
// Invariants:
// - The source is read through one ObjectHandle (one version), and its bytes are checked against
//   its stored checksum on their way into the new object: damaged bytes never become an object
//   with a fresh checksum (kCorruption).
// - A rewrite in place keeps the object's version and commits only if the object still is the
//   version it read (PutOptions::expect), else kConflict: a concurrent PUT wins.
// - An append's object stays invisible until AppendFlush commits it; at most kMaxOpenAppends are
//   open at once, and one left unused for kAppendTtl expires (its writer leaves nothing behind).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/object_handle.h"
#include "store/object_writer.h"
#include "util/status.h"

namespace ais {

class Store;

class Rewriter {
 public:
  // Reads and writes objects through `store`'s Open and BeginPut.
  explicit Rewriter(Store& store) : store_(store) {}
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  // Rewrites one object as chunks of chunk_size (or monolithic when chunk_size == 0).
  // Skips objects already in that layout and objects overwritten meanwhile.
  Status Rechunk(const std::string& bucket, const std::string& name, uint64_t chunk_size);
  // Merges `md` into the object's custom metadata (or replaces it). Keeps the version.
  Status SetCustom(const std::string& bucket, const std::string& name,
                   std::vector<std::pair<std::string, std::string>> md, bool replace);
  // Server-side copy; the destination gets a new version and the source's custom metadata.
  // `through`: the destination is a remote bucket's object: its bytes, checked against the
  // source's checksum first, go to the backend before the local commit (nothing is committed if
  // that fails). Blocks on the backend then: keep it off I/O threads.
  Status Copy(const std::string& src_bucket, const std::string& src_name, const std::string& dst_bucket,
              const std::string& dst_name, const WriteThroughFn& through);

  // An empty handle starts a new append (copying the object's current content first: blocking,
  // keep it off I/O threads); the returned handle names it for the next call. More than
  // kMaxOpenAppends open: kTooManyRequests.
  static constexpr size_t kMaxOpenAppends = 256;
  static constexpr std::chrono::minutes kAppendTtl{10};
  Result<std::string> Append(const std::string& bucket, const std::string& name, const std::string& handle,
                             const std::function<Status(ObjectWriter&)>& write_body);
  Status AppendFlush(const std::string& bucket, const std::string& name, const std::string& handle,
                     ObjectMeta* meta, const WriteThroughFn& through);

 private:
  struct AppendState;
  // Copies the handle's bytes into w and commits it (rechunk, custom metadata, copy).
  Status CopyInto(ObjectHandle& src, ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through = {});
  // Rewrites an object with new options (custom metadata, layout), keeping its version; kConflict
  // if it changed meanwhile. Keeps the layout unless opts.force_chunk_size says otherwise.
  Status Rewrite(const std::string& bucket, const std::string& name, ObjectHandle& h, PutOptions opts);

  Store& store_;
  std::mutex appends_mu_;
  std::map<std::string, std::shared_ptr<AppendState>> appends_;  // guarded by appends_mu_
};

}  // namespace ais
