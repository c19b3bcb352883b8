// Maintenance jobs a client may start by kind (PUT /v1/cluster {"action":"start"}), as on a
// real cluster: lru (evicts cached remote objects, least recently used first, down to the low
// watermark: jobs/eviction_plan.h), cleanup (removes stale temp files), load-lom-cache (reads every object's metadata), and the
// cluster-level rebalance/resilver, which have nothing to move on one node.
#pragma once

#include <string>
#include <vector>

#include "jobs/job_registry.h"
#include "store/store.h"
#include "util/status.h"

namespace ais {

// Where a filesystem's used capacity is at or above space.highwm, evicts cached objects of the
// remote buckets with lru.enabled (of `buckets`; all when empty) down to space.lowwm, least
// recently accessed first, none accessed within lru.dont_evict_time (EvictionPlan). ais://
// objects are never evicted. Counts objects and bytes evicted (also Capacity::AddEvicted); an
// object read or rewritten meanwhile is kept (Store::Evict).
Status RunLru(Store& store, JobControl& jc, const std::vector<std::string>& buckets);
// Removes temp files older than a day from every mountpath's work dir (a PUT that old is dead:
// its connection timed out long ago), and, once 30 minutes old, chunks no object references
// and nothing writes (Store::RemoveOrphanedChunks) and what deleted buckets left behind
// (Store::RemoveLeftovers); counts them and their bytes.
Status RunCleanup(Store& store, JobControl& jc);
// Reads the metadata of every object of the buckets (all when empty); counts them.
Status RunWarmup(Store& store, JobControl& jc, const std::vector<std::string>& buckets);
// Scrub: checks every object of the buckets (all when empty) on every mountpath: header,
// layout, chunk files and content checksum (Store::ScrubObject). Counts objects and bytes
// checked; each damaged object is quarantined, logged (warning, with the reason) and counted as
// one of the job's errors.
Status RunScrub(Store& store, JobControl& jc, const std::vector<std::string>& buckets);
// make-n-copies (AIS): brings every object of the bucket to `copies` copies on as many
// mountpaths, or trims the extra ones (Store::SyncCopies); counts objects and their bytes, each
// object that fails is one of the job's errors.
Status RunMakeNCopies(Store& store, JobControl& jc, const std::string& bucket, size_t copies);

}  // namespace ais
