// Replies whose body is produced on a thread of its own (GetBatch archives, GET ?archpath from
// compressed shards, GET ?archregx): the producer writes into a bounded PieceQueue (or a temp
// file) and this connection's coroutine only moves bytes to the socket, so the io thread never
// compresses, never reads files, and never waits on a disk. BatchService holds what those
// replies share.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "api/moss_request.h"
#include "archive/archive_format.h"
#include "archive/batch_assembler.h"
#include "archive/output_sink.h"
#include "archive/worker_pool.h"
#include "service/context.h"
#include "jobs/get_batch_jobs.h"
#include "util/byte_budget.h"

namespace ais {

// Server-wide GetBatch settings (AIS config section `get_batch`, plus our own bounds).
struct BatchConfig {
  uint32_t max_soft_errs = 8;
  size_t max_items = 100000;  // items in one request; more get a 400 naming the limit
  size_t max_active = 64;  // concurrent producer threads; more requests get 429
  size_t fetchers = 2;     // fetching threads per batch, its assembling thread included
  // Request bodies (MossReq JSON): one at most max_body bytes, all those being read and parsed
  // at once at most max_bodies_in_memory (more get 429).
  size_t max_body = 256 << 20;  // ~2-3M items; the SDK has no bound, neither does AIS
  size_t max_bodies_in_memory = 512 << 20;
};

class ProducerSet;  // the producer threads running (batch_stream.cc)

// What GetBatch requests (and the other produced replies) share, one per server: the settings,
// the producer threads running (at most max_active; Shutdown cancels them), the get-batch jobs
// requests run under, and the pool of threads producers and fetchers run on. Owned by main and
// reached through ServerContext::batch, like every other dependency. Thread-safe.
class BatchService {
 public:
  BatchService(BatchConfig config, JobRegistry& registry);
  ~BatchService();  // Shutdown(), then waits for the pool's threads
  BatchService(const BatchService&) = delete;
  BatchService& operator=(const BatchService&) = delete;

  const BatchConfig& config() const { return config_; }
  GetBatchJobs& jobs() { return jobs_; }
  WorkerPool& pool() { return pool_; }
  ProducerSet& producers() { return *producers_; }
  ByteBudget& body_budget() { return body_budget_; }

  // Cancels every running producer and waits for their threads; later ones are refused (429).
  // Call once the HTTP server stopped, before the store goes away.
  void Shutdown();

 private:
  const BatchConfig config_;
  GetBatchJobs jobs_;
  std::unique_ptr<ProducerSet> producers_;
  ByteBudget body_budget_;
  WorkerPool pool_;  // destroyed first: its threads may still be leaving producers_
};

// Writes a whole body into the sink; runs on its own thread. `cancel` (called from any thread)
// makes it stop early.
struct Producer {
  std::function<Status(OutputSink*)> run;
  std::function<void()> cancel;
  // Optional: the reply's headers and length, asked once the first bytes are in (or the body
  // ended), just before the reply starts; `run` decides them before its first byte.
  std::function<void(HeaderList* headers, std::optional<uint64_t>* content_length)> describe;
};

// Streams what `producer` writes as a 200 reply of `content_type` (HTTP chunked unless
// `content_length` is known, or the producer's `describe` says), committed with the first bytes.
// A body of known length the producer finished (in memory) before the first bytes were due goes
// out whole, in one write. An error before anything was sent is a normal error reply; after
// that the body just ends early (as AIS does for GetBatch).
Task<Handled> ReplyProduced(BatchService& batch, Exchange& ex, Producer producer, std::string content_type,
                            std::optional<uint64_t> content_length);

// GetBatch, streaming (getbatch.md §4).
Task<Handled> ReplyArchiveStream(ServerContext& ctx, Exchange& ex, MossRequest req, ArchiveFormat format,
                                 BatchOptions opts);
// GetBatch, multipart (getbatch.md §5): the archive is spooled to a temp file first, then sent
// after the MossResp JSON; any error is a normal error reply.
Task<Handled> ReplyArchiveMultipart(ServerContext& ctx, Exchange& ex, MossRequest req, ArchiveFormat format,
                                    BatchOptions opts);

}  // namespace ais
