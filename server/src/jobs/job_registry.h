// JobRegistry: long operations (AIS "xactions") run on their own threads with an id, progress
// counters and an abort flag; finished jobs stay queryable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/status.h"

namespace ais {

struct JobSnapshot {
  std::string id;
  std::string kind;
  std::string bucket;
  std::string dst_bucket;  // copy/rename/archive destination, if any
  std::string ctlmsg;      // what the job was asked to do, as AIS prints it in snapshots
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // 0 while running
  std::string err;       // why the job failed (it stopped there)
  std::string soft_err;  // errors it went on past (first, and how many more)
  bool aborted = false;
  bool idle = false;  // running, but with nothing to do (kinds that idle: JobKind::idles)
  int64_t objs = 0;
  int64_t bytes = 0;
  bool running() const { return end_ns == 0; }
};

// What a running job sees: its abort flag, its counters and its error list. A job that returns
// an error failed there; errors it records with AddError and goes on past are reported too (AIS
// "continue on error"), and fail a job that is awaited by status.
class JobControl {
 public:
  bool aborted() const { return aborted_.load(std::memory_order_relaxed); }
  // Asks the job to stop at its next check (JobRegistry::Abort; a job may also give up itself),
  // and runs the OnAbort callback, on this thread, the first time.
  void Abort();
  // `fn` runs once when the job is aborted (at once if it already was): for jobs that wait on
  // something other than their own loop. REQUIRES: called at most once, from the job itself.
  void OnAbort(std::function<void()> fn);
  // A running job that idles (JobKind::idles) says whether it has work right now.
  void SetIdle(bool idle) { idle_.store(idle, std::memory_order_relaxed); }
  void Add(int64_t objs, int64_t bytes) {
    objs_.fetch_add(objs, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void AddError(const std::string& msg);
  // "first error (and N more errors)", or "".
  std::string SoftErrors() const;
  // Waits until the job is aborted or `d` has passed; returns aborted().
  bool WaitAborted(std::chrono::milliseconds d);

 private:
  friend class JobRegistry;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> idle_{false};
  std::atomic<int64_t> objs_{0};
  std::atomic<int64_t> bytes_{0};
  mutable std::mutex err_mu_;
  std::condition_variable aborted_cv_;  // with err_mu_: Abort() wakes WaitAborted()
  std::string first_err_;  // guarded by err_mu_
  size_t num_errs_ = 0;    // guarded by err_mu_
  std::function<void()> on_abort_;  // guarded by err_mu_; cleared once run
};

// Optional facts of a job, fixed at start.
struct JobOptions {
  std::string id;  // "" -> a generated one
  std::string dst_bucket;
  std::string ctlmsg;
  // A kind that idles (AIS "demand" xactions such as copy-listrange): once its work is done
  // the job stays running, idle, for the registry's idle timeout, then ends; an abort ends it
  // sooner (and it is reported aborted). A job that failed ends at once.
  bool idles_after = false;
};

class JobRegistry {
 public:
  // AIS xact.IdleDefault: how long a demand job idles before it ends.
  static constexpr std::chrono::milliseconds kDefaultIdleTimeout{60000};

  explicit JobRegistry(std::chrono::milliseconds idle_timeout = kDefaultIdleTimeout) : idle_timeout_(idle_timeout) {}
  ~JobRegistry();  // aborts running jobs and joins them
  std::chrono::milliseconds idle_timeout() const { return idle_timeout_; }

  // Starts fn on a new thread; the job is visible to Get/Query before this returns.
  // `id` "" -> a generated one.
  std::string Start(std::string kind, std::string bucket, std::function<Status(JobControl&)> fn,
                    std::string id = "");
  std::string Start(std::string kind, std::string bucket, std::function<Status(JobControl&)> fn, JobOptions opts);
  std::optional<JobSnapshot> Get(const std::string& id) const;
  // Matching jobs (empty filters match all), newest first.
  std::vector<JobSnapshot> Query(const std::string& id, const std::string& kind, const std::string& bucket,
                                 bool only_running) const;
  // Returns false if no such job; aborting a finished job is a no-op.
  bool Abort(const std::string& id);

 private:
  struct Job {
    JobSnapshot info;  // guarded by JobRegistry::mu_ (counters live in control)
    JobControl control;
    std::thread thread;
  };
  // Shared so that Abort can run a job's abort callback outside mu_ while the job may be pruned.
  JobSnapshot SnapshotLocked(const Job& job) const;
  void PruneLocked();

  const std::chrono::milliseconds idle_timeout_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // guarded by mu_
};

}  // namespace ais
