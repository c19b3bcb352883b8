// Resilver (AIS xaction kind "resilver"): after the mountpaths change (attach, detach, enable,
// disable, the health check's disable), every object goes where placement now wants it, with its
// chunks, and mirrored objects get their copy count back (Store::ResilverObject, per object under
// its stripe lock; reads go on). Progress: objects and bytes moved or written, in the job's stats.
//
// Invariants:
// - At most one resilver runs for the latest change: a change aborts the running one and starts
//   another over the new set (AIS preempts the same way). A resilver that walked every bucket
//   without an abort or an error ends the change it started for (Store::ResilverDone: leaving
//   mountpaths are detached, nothing pending); otherwise the change stays pending (persisted in
//   the state file), and the next start runs it again: an interrupted resilver loses nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "jobs/job_registry.h"
#include "store/store.h"
#include "util/status.h"

namespace ais {

// Passes over every bucket's objects until one saw no write land on a leaving mountpath; `seen`:
// Store::mountpath_changes() when it started.
Status RunResilver(Store& store, JobControl& jc, uint64_t seen);

class Resilver {
 public:
  // Hooks the store's mountpath changes and, if a resilver is pending (a change the last run did
  // not finish), starts one. REQUIRES: `store` and `jobs` outlive this.
  Resilver(Store& store, JobRegistry& jobs);
  ~Resilver();  // unhooks; a running job is the registry's
  Resilver(const Resilver&) = delete;
  Resilver& operator=(const Resilver&) = delete;

  // Aborts the running resilver, if any, and starts a new one; its job ID.
  std::string Start();

 private:
  // What the store's hook holds: it may run on another thread (the health check) while this
  // goes; once `owner` is null it starts nothing.
  struct Hook {
    std::mutex mu;
    Resilver* owner = nullptr;  // guarded by mu
  };

  Store& store_;
  JobRegistry& jobs_;
  std::mutex mu_;
  std::string last_;  // the job started last; guarded by mu_
  const std::shared_ptr<Hook> hook_ = std::make_shared<Hook>();
};

}  // namespace ais
