// GetBatchJobs: GetBatch requests as work items of jobs of kind "get-batch" (AIS x-moss), so
// that they show in the job lists and can be aborted like any job.
//
// As AIS's x-moss: the running job of a request's bucket serves it (requests that name no one
// bucket share the job of bucket ""); a request for another bucket starts a job of its own, and
// the others keep running. A job reports idle while none of its requests is in flight and ends
// once it has had none for `idle_end` (the registry's idle timeout, AIS xact.IdleDefault); the
// next request for its bucket starts a new job.
// Aborting the job (PUT /v1/cluster stop, by id or by kind) cancels every request in flight;
// requests that arrive afterwards go to a new job. The job's counters (loc-objs, loc-bytes) are
// the items and bytes its requests delivered, published when a request ends and about once a
// second while requests run.
//
// Thread-safe. Lock order: GetBatchJobs::mu_ → a job's mutex → JobRegistry. Cancel callbacks
// run with no lock held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "jobs/job_registry.h"

namespace ais {

class GetBatchJobs {
 public:
  explicit GetBatchJobs(JobRegistry& registry) : GetBatchJobs(registry, registry.idle_timeout()) {}
  GetBatchJobs(JobRegistry& registry, std::chrono::milliseconds idle_end);
  GetBatchJobs(const GetBatchJobs&) = delete;
  GetBatchJobs& operator=(const GetBatchJobs&) = delete;

  struct State;  // one job's (get_batch_jobs.cc)

  // One request, from Begin() until destroyed.
  class Work {
   public:
    ~Work();
    Work(const Work&) = delete;
    Work& operator=(const Work&) = delete;
    const std::string& job_id() const;
    // Items (and their bytes) delivered; any thread.
    void Add(int64_t objs, int64_t bytes);

   private:
    friend class GetBatchJobs;
    Work(std::shared_ptr<State> state, uint64_t ticket) : state_(std::move(state)), ticket_(ticket) {}
    std::shared_ptr<State> state_;
    uint64_t ticket_;
  };

  // Enters the running job of `bucket` (starting one if none runs; "" = no one bucket).
  // `cancel` runs at most once, on the aborting thread, if the job is aborted while this
  // request is in flight; it must be cheap and must not block.
  std::unique_ptr<Work> Begin(const std::string& bucket, std::function<void()> cancel);

 private:
  JobRegistry& registry_;
  const std::chrono::milliseconds idle_end_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<State>> current_;  // guarded by mu_; by bucket, the job taking its new work
};

}  // namespace ais
