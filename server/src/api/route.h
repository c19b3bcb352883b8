// The request target split as AIS does (cmn/http.go ParseURL): /v1/<area>/<bucket>/<object...>.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

struct Route {
  std::string area;    // "objects", "buckets", "health", "daemon", "cluster", "ml", ...
  std::string bucket;  // decoded; may be empty
  std::string object;  // decoded rest (may contain '/'); may be empty
  bool has_extra = false;  // segments after the bucket in a buckets/ path
};

// kNotFound for a path outside /v1, kInvalidArgument for a malformed percent-escape.
Result<Route> ParseRoute(std::string_view raw_path);

}  // namespace ais
