#include "jobs/job_kinds.h"

#include <array>

namespace ais {
namespace {

// Kinds and display names as AIS names them (xact/api_table.go).
constexpr std::array kKinds = {
    JobKind{"rebalance", "", true, false},
    JobKind{"resilver", "", true, false},
    JobKind{"lru", "lru-eviction", true, false},
    JobKind{"cleanup-store", "cleanup", true, false},
    JobKind{"summary-bck", "summary", false, false},
    JobKind{"rechunk", "", true, false},
    JobKind{"archive", "", false, true},
    JobKind{"copy-listrange", "copy-objects", false, true},
    JobKind{"etl-listrange", "etl-objects", false, true},
    JobKind{"blob-download", "", true, false},
    JobKind{"download", "", false, true},
    JobKind{"promote", "promote-files", false, false},
    JobKind{"evict-listrange", "evict-objects", false, false},
    JobKind{"evict-remote-bck", "evict-remote-bucket", false, false},
    JobKind{"delete-listrange", "delete-objects", false, false},
    JobKind{"prefetch-listrange", "prefetch-objects", true, false},
    JobKind{"ec-encode", "ec-bucket", true, false},
    JobKind{"make-n-copies", "mirror", true, false},
    JobKind{"move-bck", "rename-bucket", false, false},
    JobKind{"copy-bck", "copy-bucket", false, false},
    JobKind{"etl-bck", "etl-bucket", false, false},
    JobKind{"list", "", false, true},
    JobKind{"get-batch", "", false, true},
    JobKind{"load-lom-cache", "warm-up-metadata", true, false},
    JobKind{"create-inventory", "", false, false},
    // AIS kinds this server never runs: valid in queries (an empty list), not startable.
    JobKind{"election", "elect-primary", false, false},
    JobKind{"etl-inline", "", false, false},
    JobKind{"ec-get", "", false, true},
    JobKind{"ec-put", "", false, true},
    JobKind{"ec-resp", "", false, true},
    JobKind{"put-copies", "", false, true},
    JobKind{"index-shard", "", false, false},
    JobKind{"summary-shard", "", false, false},
    // Ours, no AIS kind: verifies every object, quarantines the damaged (docs/storage-format.md).
    JobKind{"scrub", "", true, false},
};

}  // namespace

const JobKind* FindJobKind(std::string_view kind_or_name) {
  if (kind_or_name.empty()) return nullptr;
  for (const auto& k : kKinds) {
    if (k.kind == kind_or_name || (!k.display.empty() && k.display == kind_or_name)) return &k;
  }
  return nullptr;
}

std::string NormalizeJobKind(std::string_view kind_or_name) {
  const JobKind* k = FindJobKind(kind_or_name);
  return std::string(k ? k->kind : kind_or_name);
}

}  // namespace ais
