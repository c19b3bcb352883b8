// JobKind: the static facts of each job kind this server runs (AIS `xact.Table`): display name,
// whether `PUT /v1/cluster {"action":"start"}` may start it, and whether it idles (its snapshots
// report is_idle once the work is done, which is what the SDK's wait() polls for).
#pragma once

#include <string>
#include <string_view>

namespace ais {

struct JobKind {
  std::string_view kind;     // wire kind, e.g. "copy-bck"
  std::string_view display;  // display name, e.g. "copy-bucket" ("" = same as kind)
  bool startable;
  bool idles;
};

// By kind or display name; nullptr if unknown.
const JobKind* FindJobKind(std::string_view kind_or_name);
// The wire kind for a kind or display name; unknown names come back unchanged.
std::string NormalizeJobKind(std::string_view kind_or_name);

}  // namespace ais
