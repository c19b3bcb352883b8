// BatchAssembler: writes one GetBatch output archive (getbatch.md §3): exactly one entry per
// requested item, strictly in request order. Items (objects, byte ranges, files inside shards)
// are fetched ahead through an OrderedWindow (by Run's thread, joined by worker threads once
// items prove slow) and written in order, so memory is bounded by the window, never by the
// batch. Knows the store and the archive formats, not HTTP.
//
// Run() blocks: call it on a thread of its own. The request and the store must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "api/moss_request.h"
#include "archive/archive_format.h"
#include "archive/output_sink.h"
#include "archive/shard.h"
#include "archive/worker_pool.h"
#include "store/store.h"

namespace ais {

struct BatchOptions {
  uint32_t max_soft_errs = 8;     // get_batch.max_soft_errs: placeholders allowed before the batch fails
  size_t window = 64;             // items fetched ahead of the writer
  size_t fetchers = 2;            // fetching threads, the assembling one included
  size_t extract_max = 8 << 20;   // compressed archived files up to this size are extracted by
                                  // fetchers; larger ones are streamed while written
  std::string node_id;            // "t[...]": prefixes per-item error messages, as AIS does
  bool keep_outcomes = false;     // record per-item outcomes (multipart metadata)
  // Entries written and their bytes since the last call; called by Run every few dozen entries
  // and once at its end.
  std::function<void(int64_t objs, int64_t bytes)> progress;
  // Runs the fetchers besides Run's own thread (none: Run fetches every item itself).
  WorkerPool* pool = nullptr;
  // Brings a remote bucket's object that is not cached into the store (a cold GET; blocks), by
  // its store key and name; kNotFound when the remote has none. Unset: remote buckets are missing.
  std::function<Status(const std::string& key, const std::string& name)> fetch_missing;
};

// One item's MossOut facts.
struct ItemOutcome {
  uint64_t size = 0;
  std::string err_msg;  // set when the item became a placeholder
};

class BatchAssembler {
 public:
  BatchAssembler(Store& store, const MossRequest& req, ArchiveFormat format, BatchOptions opts);

  // Writes the whole archive into `sink`. OK: complete, trailer included. Otherwise the error that
  // stopped it; nothing more was written after the last complete entry (no trailer).
  Status Run(OutputSink* sink);
  // Per-item outcomes, in order; filled by Run when opts.keep_outcomes.
  const std::vector<ItemOutcome>& outcomes() const { return outcomes_; }
  uint32_t soft_errors() const { return soft_errs_; }
  // Makes a running Run() stop before its next item (thread-safe).
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  // Cancel(), because the job the request belongs to was aborted (Run says so).
  void Abort() {
    aborted_.store(true, std::memory_order_relaxed);
    Cancel();
  }

  struct Prepared;  // one fetched item (batch_assembler.cc)

 private:
  Status RunItems(OutputSink* sink, int64_t* objs, int64_t* bytes);
  Prepared Prepare(size_t i);
  Prepared PrepareObject(const MossItem& it);
  Prepared PrepareArchived(const MossItem& it);
  Result<std::shared_ptr<Shard>> GetShard(uint32_t bucket, const std::string& objname);
  // Opens objname in req_.buckets[bucket], through its BucketDirs when it has them, and then
  // reads its first bytes into `ahead` with the header when it can (Store::Open): *got of them.
  Result<ObjectHandle> OpenObject(uint32_t bucket, const std::string& objname, std::span<char> ahead = {},
                                  size_t* got = nullptr);
  std::string EntryName(const MossItem& it, bool with_archpath) const;

  Store& store_;
  const MossRequest& req_;
  const ArchiveFormat format_;
  const BatchOptions opts_;
  std::vector<std::string> keys_;  // per req_.buckets entry: its store key (store/bck.h); set with dirs_
  std::vector<std::optional<BucketDirs>> dirs_;  // per req_.buckets entry; set before any fetching
  std::vector<bool> verify_;  // per req_.buckets entry: checksum.validate_warm_get; set with dirs_
  std::vector<ItemOutcome> outcomes_;
  uint32_t soft_errs_ = 0;
  std::atomic<size_t> size_hint_{0};  // the size of the last whole object prepared (PrepareObject)
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> aborted_{false};

  struct CachedShard {
    uint32_t bucket;
    std::string objname;
    Result<std::shared_ptr<Shard>> shard;  // or why it could not be opened
  };
  std::mutex shards_mu_;
  std::vector<CachedShard> shards_;  // guarded by shards_mu_; most recently used last
};

}  // namespace ais
