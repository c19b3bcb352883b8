// Maintenance jobs a client may start by kind (PUT /v1/cluster {"action":"start"}), as on a
// real cluster: lru (ais:// buckets are never evicted: it visits and finds nothing to do),
// cleanup (removes stale temp files), load-lom-cache (reads every object's metadata), and the
// cluster-level rebalance/resilver, which have nothing to move on one node.
#pragma once

#include <string>
#include <vector>

#include "jobs/job_registry.h"
#include "store/store.h"
#include "util/status.h"

namespace ais {

// Visits the buckets' objects (all buckets when empty); evicts nothing from ais:// buckets.
Status RunLru(Store& store, JobControl& jc, const std::vector<std::string>& buckets);
// Removes temp files older than a day from every mountpath's work dir (a PUT that old is dead:
// its connection timed out long ago); counts them.
Status RunCleanup(Store& store, JobControl& jc);
// Reads the metadata of every object of the buckets (all when empty); counts them.
Status RunWarmup(Store& store, JobControl& jc, const std::vector<std::string>& buckets);
// Scrub: checks every object of the buckets (all when empty) on every mountpath: header,
// layout, chunk files and content checksum (Store::ScrubObject). Counts objects and bytes
// checked; each damaged object is quarantined, logged (warning, with the reason) and counted as
// one of the job's errors.
Status RunScrub(Store& store, JobControl& jc, const std::vector<std::string>& buckets);

}  // namespace ais
