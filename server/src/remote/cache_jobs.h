// The jobs of the cache tier: prefetch (AIS `prefetch-listrange`) fetches the selected objects of a
// remote bucket with a few concurrent cold GETs, so a training epoch later reads them locally;
// evict (`evict-listrange`) drops their cached copies.
#pragma once

#include <string>

#include "jobs/bucket_jobs.h"
#include "jobs/job_registry.h"
#include "jobs/object_selection.h"
#include "remote/cache_tier.h"

namespace ais {

struct PrefetchArgs {
  std::string key;  // the remote bucket's store key
  ObjectSelection sel;
  bool latest = false;           // re-check cached objects against the remote (refetch if changed)
  bool continue_on_err = false;  // "coer": record errors and go on
  int64_t num_workers = 0;       // concurrent fetches: 0 auto (4), -1 one at a time, else that many (<= 32)
  uint64_t blob_threshold = 0;   // objects at least this big are blob downloads (0: none; else >= 1 MiB)
  BlobOptions blob;              // how those are fetched
  bool count = true;             // count what is fetched in the job's stats (not when a copy that follows counts)
};

// Cached objects are skipped (unless `latest` finds them changed); a prefix selection lists the
// remote bucket (whose listing gives the sizes the blob threshold needs; a list or range asks S3
// for each object's size only when a threshold is set). An object missing remotely is an error only when named in a list. Counts each
// object fetched and its bytes.
Status RunPrefetch(CacheTier& tier, Store& store, JobControl& jc, const PrefetchArgs& args);

// copy-bck from a remote bucket (spec remote-backend §10): its cached objects under `prefix`,
// or with `all` every object the remote lists (fetched on the way), copied into `dst`. `latest`
// re-checks each cached copy first and fetches it again if it changed (an object gone remotely
// is then an error); `sync` also drops what the remote no longer has, from the cache and the
// destination. `dst == src` refreshes the cache only.
struct CopyRemoteArgs {
  std::string src;  // the remote bucket's store key
  std::string dst;
  std::string prefix;
  CopyNaming naming;
  bool all = false;
  bool latest = false;
  bool sync = false;
  bool dry_run = false;
  bool continue_on_err = false;
  int64_t num_workers = 0;  // as prefetch's
  ThroughFor through{};     // set when dst is another remote bucket
};
Status RunCopyRemoteBucket(CacheTier& tier, Store& store, JobControl& jc, const CopyRemoteArgs& args);

// delete-listrange on a remote bucket: each selected object is deleted in the backend first, then
// its cached copy, so a failed backend call leaves the cache as it was. A list or range asks the
// backend about each name first (S3 answers a delete of a missing key with success): a listed
// name neither the backend nor the cache has is recorded as an error (the job fails, as a missing
// listed name does on ais://) and the rest goes on; a range skips it. A prefix ("" = the whole
// bucket) lists the backend, then drops the cached copies under it the backend no longer has.
// Any other error stops the job, unless `continue_on_err` (then it is recorded). Counts each
// object deleted.
struct DeleteRemoteArgs {
  std::string key;  // the remote bucket's store key
  ObjectSelection sel;
  bool continue_on_err = false;
  int64_t num_workers = 0;  // as prefetch's
};
Status RunDeleteRemote(CacheTier& tier, Store& store, JobControl& jc, const DeleteRemoteArgs& args);

// Removes the cached copies of the selected objects (the remote keeps them); one not cached is
// skipped, not an error. Counts the copies removed.
Status RunEvict(Store& store, JobControl& jc, const std::string& key, const ObjectSelection& sel);

}  // namespace ais
