#include "handlers/batch_stream.h"

#include "metrics/metrics.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <unordered_set>

#include "archive/file_spool.h"
#include "util/base64.h"
#include "archive/piece_queue.h"
#include "archive/worker_pool.h"
#include "jobs/get_batch_jobs.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kChunkBytes = 256 << 10;                      // a chunk worth sending at once
constexpr auto kFlushInterval = std::chrono::milliseconds(5);  // after this, send whatever is there
constexpr auto kDoneCheckInterval = std::chrono::seconds(1);
// Threads of the pool: 64 batches (BatchConfig::max_active) x (1 assembler + 1 fetcher), and
// room for archive GETs. An idle one exits after kPoolLinger.
constexpr size_t kPoolThreads = 256;
constexpr auto kPoolLinger = std::chrono::seconds(10);

// One running producer: shared by the connection's coroutine and the producing thread.
struct Job {
  Producer producer;
  std::unique_ptr<PieceQueue> queue;  // streaming
  std::unique_ptr<FileSpool> spool;   // multipart
  std::atomic<bool> cancelled{false};
  std::atomic<bool> done{false};
  Status final;                // written by the thread before `done`
  std::function<void()> wake;  // multipart: wakes the coroutine once done

  void Cancel() {
    cancelled.store(true);
    if (producer.cancel) producer.cancel();
    if (queue) queue->Cancel();
  }
};

}  // namespace

// Every running producer thread: bounds their number and lets shutdown stop them.
class ProducerSet {
 public:
  explicit ProducerSet(size_t max_active) : max_active_(max_active) {}
  bool Enter(Job* job) {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= max_active_) return false;
    jobs_.insert(job);
    return true;
  }
  void Leave(Job* job) {
    std::lock_guard lock(mu_);
    jobs_.erase(job);
    if (jobs_.empty()) idle_.notify_all();
  }
  void Shutdown() {
    std::unique_lock lock(mu_);
    stopping_ = true;
    for (Job* j : jobs_) j->Cancel();
    idle_.wait(lock, [&] { return jobs_.empty(); });
  }

 private:
  const size_t max_active_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::unordered_set<Job*> jobs_;  // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
};

namespace {

// A callable that wakes a coroutine waiting on `timer`, from any thread.
std::function<void()> Waker(const asio::any_io_executor& exec, const std::shared_ptr<asio::steady_timer>& timer) {
  std::weak_ptr<asio::steady_timer> weak = timer;
  return [exec, weak] {
    asio::post(exec, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  };
}

void RunJob(const std::shared_ptr<Job>& job, ProducerSet& producers) {
  OutputSink* sink = job->queue ? static_cast<OutputSink*>(job->queue.get()) : job->spool.get();
  Status st = job->producer.run(sink);
  if (st.ok() && job->spool) st = job->spool->Flush();
  if (!st.ok() && job->cancelled.load()) st = Status::IOError("cancelled");
  job->final = st;
  job->done.store(true);
  if (job->queue) job->queue->Close(st);
  if (job->wake) job->wake();
  producers.Leave(job.get());
}

// Starts the producing thread; kTooManyRequests when too many run.
Status Launch(BatchService& batch, const std::shared_ptr<Job>& job) {
  ProducerSet& producers = batch.producers();
  if (!producers.Enter(job.get())) return Status::TooManyRequests("too many concurrent archive requests, retry later");
  if (!batch.pool().Run([job, &producers] { RunJob(job, producers); })) {
    producers.Leave(job.get());
    return Status::TooManyRequests("no thread to spare for an archive request, retry later");
  }
  return Status::OK();
}

// Cancels the job when the coroutine leaves (normally, on error, or destroyed at shutdown), so
// that the producing thread never waits for a reader that is gone.
class CancelOnExit {
 public:
  explicit CancelOnExit(std::shared_ptr<Job> job) : job_(std::move(job)) {}
  ~CancelOnExit() { job_->Cancel(); }
  CancelOnExit(const CancelOnExit&) = delete;
  CancelOnExit& operator=(const CancelOnExit&) = delete;

 private:
  std::shared_ptr<Job> job_;
};

std::vector<BodyPiece> ToBody(const std::vector<PieceQueue::Piece>& pieces) {
  std::vector<BodyPiece> body;
  body.reserve(pieces.size());
  for (const auto& p : pieces) {
    BodyPiece bp;
    if (p.is_file()) {
      bp.file = p.file;
    } else {
      bp.data = p.data();
      bp.len = p.size();
    }
    body.push_back(bp);
  }
  return body;
}

// A GetBatch request's assembler, entered into the running get-batch job.
struct BatchWork {
  std::shared_ptr<const MossRequest> req;
  std::shared_ptr<BatchAssembler> assembler;
  std::shared_ptr<GetBatchJobs::Work> work;  // the request's part of the job, until the producer is gone
};

BatchWork StartBatchWork(ServerContext& ctx, MossRequest req, ArchiveFormat format, BatchOptions opts) {
  BatchWork bw;
  bw.req = std::make_shared<const MossRequest>(std::move(req));
  // Counted into the job once the request is in it (Run starts after this returns).
  auto work = std::make_shared<std::shared_ptr<GetBatchJobs::Work>>();
  opts.progress = [work](int64_t objs, int64_t bytes) {
    (*work)->Add(objs, bytes);
    ServerMetrics().RecordGetBatchItems(static_cast<uint64_t>(objs), static_cast<uint64_t>(bytes));
  };
  opts.node_id = ctx.node.node_id;
  opts.max_soft_errs = ctx.batch.config().max_soft_errs;
  opts.fetchers = ctx.batch.config().fetchers;
  opts.pool = &ctx.batch.pool();
  bw.assembler = std::make_shared<BatchAssembler>(ctx.store, *bw.req, format, std::move(opts));
  std::weak_ptr<BatchAssembler> weak = bw.assembler;
  // The job of the request's bucket, as AIS keys x-moss by its default bucket ("" when it names several).
  const std::string job_bucket = bw.req->buckets.size() == 1 ? bw.req->buckets.front().name : std::string();
  *work = ctx.batch.jobs().Begin(job_bucket, [weak] {
    if (auto a = weak.lock()) a->Abort();
  });
  bw.work = *work;
  return bw;
}

// A GetBatch producer; it keeps the request, the assembler and the job's work item alive.
Producer AssemblerProducer(const BatchWork& bw) {
  Producer p;
  p.run = [bw](OutputSink* sink) { return bw.assembler->Run(sink); };
  auto assembler = bw.assembler;
  p.cancel = [assembler] { assembler->Cancel(); };
  return p;
}

std::string RandomHex(size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 gen(rd());
  std::string out(n, '0');
  for (auto& c : out) c = kHex[gen() & 15];
  return out;
}

// The MossResp JSON (getbatch.md §5) and the multipart framing around the archive.
void MultipartFraming(const MossRequest& r, const std::vector<ItemOutcome>& outcomes, const std::string& uuid,
                      const std::string& boundary, std::string* head, std::string* tail) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < r.items.size(); ++i) {
    const MossItem& it = r.items[i];
    nlohmann::json o = nlohmann::json::object();
    o["objname"] = r.objname(it);
    if (!r.archpath(it).empty()) o["archpath"] = r.archpath(it);
    o["bucket"] = r.bucket(it).name;
    o["provider"] = r.bucket(it).provider;
    if (!outcomes[i].err_msg.empty()) o["err_msg"] = outcomes[i].err_msg;
    if (!r.opaque(it).empty()) o["opaque"] = EncodeBase64(r.opaque(it));
    o["size"] = outcomes[i].size;
    out.push_back(std::move(o));
  }
  nlohmann::json resp = nlohmann::json::object();
  resp["uuid"] = uuid;
  resp["out"] = std::move(out);
  *head = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n" + JsonText(resp) +
          "\n\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"get-batch[" +
          uuid + "]\"\r\nContent-Type: application/octet-stream\r\n\r\n";
  *tail = "\r\n--" + boundary + "--\r\n";
}

std::vector<BodyPiece> MultipartPieces(const FileSpool& spool, const std::string& head, const std::string& tail) {
  std::vector<BodyPiece> pieces;
  BodyPiece h;
  h.data = head.data();
  h.len = head.size();
  pieces.push_back(h);
  if (spool.size() > 0) {
    BodyPiece f;
    f.file = FileSegment{spool.fd(), 0, spool.size()};
    pieces.push_back(f);
  }
  BodyPiece t;
  t.data = tail.data();
  t.len = tail.size();
  pieces.push_back(t);
  return pieces;
}

bool AllInMemory(const std::vector<PieceQueue::Piece>& pieces) {
  return std::none_of(pieces.begin(), pieces.end(), [](const PieceQueue::Piece& p) { return p.is_file(); });
}

// REQUIRES: AllInMemory(pieces).
std::string Concat(const std::vector<PieceQueue::Piece>& pieces) {
  size_t total = 0;
  for (const auto& p : pieces) total += p.size();
  std::string out;
  out.reserve(total);
  for (const auto& p : pieces) out.append(p.data(), p.size());
  return out;
}

// Waits until the job has pieces worth sending, or has ended, and takes them.
Task<PieceQueue::Taken> TakeNext(Job& job, asio::steady_timer& timer) {
  bool take_any = false;  // the flush interval passed: send even a small chunk
  for (;;) {
    PieceQueue::Taken taken = job.queue->Take(take_any ? 1 : kChunkBytes);
    if (!taken.pieces.empty() || taken.closed) co_return taken;
    timer.expires_after(kFlushInterval);
    beast::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    take_any = !ec;  // woken early (cancelled): enough is queued
  }
}

// The error reply for a spool that cannot be created: the work directory is the server's own,
// so its absence (ENOENT, ENOTDIR) is a server error, never the client's 404; a full disk stays
// kNoSpace (507).
Status SpoolFailure(const Status& st) {
  if (st.code() == Status::Code::kNoSpace) return st;
  return Status::IOError(st.message());
}

// The body from `taken`, the first pieces, on. The reply has begun: an error can only cut it
// short, and the client going away ends it (the caller's CancelOnExit then stops the thread).
Task<Replied> StreamOut(StreamReply out, Job& job, asio::steady_timer& timer, PieceQueue::Taken taken,
                        std::string_view what) {
  for (;;) {
    std::vector<BodyPiece> body = ToBody(taken.pieces);
    if (!co_await out.Write(body)) co_return co_await out.End(false);
    if (taken.closed) {
      if (!taken.final.ok()) {
        LogError(std::string(what) + ": reply cut short: " + taken.final.message());
      }
      co_return co_await out.End(taken.final.ok());
    }
    taken = co_await TakeNext(job, timer);
  }
}

}  // namespace

BatchService::BatchService(BatchConfig config, JobRegistry& registry)
    : config_(config),
      jobs_(registry),
      producers_(std::make_unique<ProducerSet>(config.max_active)),
      body_budget_(config.max_bodies_in_memory),
      pool_(kPoolThreads, kPoolLinger) {}

BatchService::~BatchService() {
  Shutdown();
  pool_.Shutdown();
}

void BatchService::Shutdown() { producers_->Shutdown(); }

Task<Handled> ReplyProduced(BatchService& batch, Exchange& ex, Producer producer, std::string content_type,
                            std::optional<uint64_t> content_length) {
  auto exec = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(exec);
  auto job = std::make_shared<Job>();
  job->producer = std::move(producer);
  job->queue = std::make_unique<PieceQueue>(PieceQueue::Limits(), Waker(exec, timer));
  if (Status st = Launch(batch, job); !st.ok()) co_return st;
  CancelOnExit guard(job);
  PieceQueue::Taken first = co_await TakeNext(*job, *timer);
  // Nothing sent yet: an error is still a proper HTTP error reply.
  if (first.closed && !first.final.ok()) co_return first.final;
  HeaderList headers;
  // The producer set these before its first byte; taking the pieces under the queue's lock
  // orders that write before this read.
  if (job->producer.describe) job->producer.describe(&headers, &content_length);
  if (content_length && first.closed && AllInMemory(first.pieces)) {
    // The whole body is here (a small one, as an inline transform's usually is): one write
    // instead of a header, the body and an end, which a client would wake up for in turn.
    // (A reply of unknown length stays chunked, as AIS sends a GetBatch stream.)
    co_return co_await ex.Reply(http::status::ok, headers, Concat(first.pieces), content_type);
  }
  StreamReply out = co_await ex.BeginStream(http::status::ok, headers, content_type, content_length);
  co_return co_await StreamOut(std::move(out), *job, *timer, std::move(first), ex.raw_path());
}

Task<Handled> ReplyArchiveStream(ServerContext& ctx, Exchange& ex, MossRequest req, ArchiveFormat format,
                                 BatchOptions opts) {
  BatchWork bw = StartBatchWork(ctx, std::move(req), format, std::move(opts));
  Producer p = AssemblerProducer(bw);
  bw = BatchWork();  // the producer holds what it needs
  co_return co_await ReplyProduced(ctx.batch, ex, std::move(p), std::string(FormatContentType(format)), std::nullopt);
}

Task<Handled> ReplyArchiveMultipart(ServerContext& ctx, Exchange& ex, MossRequest req, ArchiveFormat format,
                                    BatchOptions opts) {
  auto exec = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(exec);
  opts.keep_outcomes = true;
  BatchWork bw = StartBatchWork(ctx, std::move(req), format, std::move(opts));
  auto job = std::make_shared<Job>();
  job->producer = AssemblerProducer(bw);
  const Mountpaths& mps = ctx.store.mountpaths();
  size_t spool_mp = 0;
  while (spool_mp + 1 < mps.size() && !mps.enabled(spool_mp)) ++spool_mp;
  auto spool = FileSpool::Create(mps.WorkDir(spool_mp));
  if (!spool.ok()) co_return SpoolFailure(spool.status());
  job->spool = std::move(*spool);
  job->wake = Waker(exec, timer);
  if (Status st = Launch(ctx.batch, job); !st.ok()) co_return st;
  CancelOnExit guard(job);
  while (!job->done.load()) {
    timer->expires_after(kDoneCheckInterval);
    beast::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (!job->final.ok()) co_return job->final;
  std::string boundary = RandomHex(60);
  std::string head, tail;
  MultipartFraming(*bw.req, bw.assembler->outcomes(), bw.work->job_id(), boundary, &head, &tail);
  std::vector<BodyPiece> pieces = MultipartPieces(*job->spool, head, tail);
  HeaderList headers;
  std::string content_type = "multipart/mixed; boundary=" + boundary;
  co_return co_await ex.ReplyPieces(http::status::ok, headers, content_type, pieces);
}

}  // namespace ais
