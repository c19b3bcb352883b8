// Offline transforms (spec etl.md §6): the objects of a bucket (etl-bck) or a selection
// (etl-listrange) through an ETL into a destination bucket, by `num_workers` threads; and the
// single-object copy through an ETL (§5). Each result is written as a new object (committed
// only when whole; through to the backend for a remote destination).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etl/etl_manager.h"
#include "jobs/bucket_jobs.h"
#include "jobs/job_registry.h"
#include "jobs/object_selection.h"
#include "store/store.h"
#include "util/status.h"

namespace ais::etl {

// The running ETLs an offline job or a copy goes through: the first, then the pipeline's.
struct EtlChain {
  std::string name;  // the first's (errors are recorded under it)
  std::shared_ptr<RunningEtl> first;
  std::vector<std::string> next_urls;  // Ais-Node-Url
};
// Finds `name` and each of `pipeline` running; kNotFound naming the first that is not.
Result<EtlChain> ResolveChain(const EtlManager& m, const std::string& name, const std::vector<std::string>& pipeline);

struct OfflineArgs {
  std::string job_id;  // the job's, for the per-object errors
  EtlChain chain;
  std::string src, dst;  // store keys
  std::string prefix;    // etl-bck: the objects under it
  std::optional<ObjectSelection> sel;  // etl-listrange: these
  CopyNaming naming;
  bool dry_run = false;
  bool continue_on_err = false;
  int64_t num_workers = 0;  // 0: auto, -1: one, N: N
  ThroughFor through{};     // a remote destination's write-through
};
// REQUIRES: dst exists unless dry_run.
Status RunOfflineTransform(Store& store, JobControl& jc, EtlManager& m, const OfflineArgs& args);

// One object of `src` through the chain (with `etl_args`) into `dst`/`to`: the single-object
// copy. The bytes written, or the error (recorded as the ETL's inline error too).
Result<uint64_t> TransformObject(Store& store, EtlManager& m, const EtlChain& chain, const std::string& etl_args,
                                 const std::string& src, const std::string& name, const std::string& dst,
                                 const std::string& to, const WriteThroughFn& through);

}  // namespace ais::etl
