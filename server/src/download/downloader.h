// Downloader: AIS download jobs (/v1/download, ext/dload): files fetched from HTTP(S) links, or
// from a remote bucket's backend, into a bucket, each committed whole or not at all. A job runs
// as one "download" job of the registry (its xaction) with its own id ("dnl-..."), keeps a
// line of status per file (in progress, finished, failed) for `ais show job download`, and stays
// queryable after it ends until removed.
//
// Threads: each job's registry thread lists its files and hands them to the job's workers (as
// many as `limits.connections`, else the default), which block on the network and the disk; no
// I/O thread ever runs a download. A failed file is recorded and the rest of the job goes on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "download/download_request.h"
#include "download/egress_guard.h"
#include "download/link_fetch.h"
#include "etl/etl_manager.h"
#include "jobs/job_registry.h"
#include "remote/cache_tier.h"
#include "store/store.h"
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

struct DownloaderOptions {
  // --download-allow-loopback: links may name this host (tests, a single-user laptop).
  bool allow_loopback = false;
  // Whether cluster feature Dload-Allow-Private-Egress is set, asked at every file.
  std::function<bool()> allow_private = [] { return false; };
  // A file's deadline when the job names none (AIS config downloader.timeout).
  std::chrono::milliseconds default_timeout{3'600'000};
  // Files fetched at once when the job sets no `limits.connections`: this many per mountpath.
  int64_t workers_per_mountpath = 8;
  // The ETLs a job's `etl_name` may name (null: none may be named).
  etl::EtlManager* etl = nullptr;
};

class Downloader {
 public:
  static constexpr int64_t kMaxConnections = 256;  // limits.connections above this are clamped
  static constexpr int kAttempts = 10;             // AIS retryCnt: attempts per file

  // Status lines kept per job for finished files and for failed ones, each: a file past them is
  // counted, not listed (AIS keeps every line in its database; a range may name 1,000,000 files).
  static constexpr size_t kMaxStatusLines = 100'000;

  Downloader(Store& store, JobRegistry& jobs, CacheTier& remote, DownloaderOptions opts);
  ~Downloader();  // Shutdown()
  // Aborts the running jobs and waits for them to end: no job writes to the store, or calls the
  // cache tier, once it returns. Start refuses new jobs from then on.
  void Shutdown();
  Downloader(const Downloader&) = delete;
  Downloader& operator=(const Downloader&) = delete;

  // Starts a job into `bucket` (a store key the caller resolved, created and authorized; a
  // backend job's bucket is remote). Returns its id. A job through an ETL needs it running, and
  // not hpull:// (kNotSupported, as AIS: the transformer would read back an object that does not
  // exist); each file then finds it again, so a restarted ETL serves the rest of the job.
  Result<std::string> Start(DownloadRequest req, const std::string& bucket);
  // One job's status (dload.StatusResp); kNotFound for an unknown id.
  Result<nlohmann::json> Status(const std::string& id, bool only_active) const;
  // The jobs whose description matches `regex` ("" = all) as dload.Job, running ones first.
  // REQUIRES: `regex` compiles (ParseAdminRequest checked it).
  nlohmann::json List(const std::string& regex, bool only_active) const;
  // kNotFound for an unknown id; aborting a finished job changes nothing.
  ais::Status Abort(const std::string& id);
  // Forgets a finished job; a running one is kInvalidArgument.
  ais::Status Remove(const std::string& id);
  // The store key of the job's bucket (for access checks); kNotFound for an unknown id.
  Result<std::string> BucketOf(const std::string& id) const;

 private:
  struct Job;
  struct Task;
  ais::Status Run(JobControl& jc, const std::shared_ptr<Job>& job);
  void RunTask(JobControl& jc, Job& job, const DownloadItem& item, uint64_t listed_size);
  ais::Status FetchHttp(JobControl& jc, Job& job, Task& task, bool* skipped);
  ais::Status FetchRemote(Job& job, Task& task, bool* skipped);
  // Where one attempt at a file of `job` goes: the object, or the job's ETL.
  Result<std::unique_ptr<FetchSink>> SinkFor(const Job& job, const DownloadItem& item, const LinkFetchOptions& fo);
  Result<std::shared_ptr<etl::RunningEtl>> FindEtl(const std::string& name) const;
  // A file into a remote bucket is written through (AIS's OWT put): the backend, then the store.
  WriteThroughFn ThroughFor(const Job& job, const std::string& name);
  void SyncDeleted(JobControl& jc, Job& job, const std::function<bool(const std::string&)>& listed);
  std::shared_ptr<Job> Find(const std::string& id) const;

  Store& store_;
  JobRegistry& jobs_;
  CacheTier& remote_;
  const DownloaderOptions opts_;
  CurlHandles curls_;
  mutable std::mutex mu_;
  std::condition_variable done_cv_;                   // with mu_: a job's run ended
  std::map<std::string, std::shared_ptr<Job>> byid_;  // guarded by mu_
  int running_ = 0;                                   // guarded by mu_
  bool shut_down_ = false;                            // guarded by mu_
};

}  // namespace ais
