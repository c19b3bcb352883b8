// Go duration strings, as AIS's JSON carries them (cos.Duration): "45s", "5m", "1h30m", "120m".
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

// A Go duration ("45s", "5m", "1h30m", "1.5s", "300ms", "0s"); kInvalidArgument otherwise.
Result<std::chrono::milliseconds> ParseGoDuration(std::string_view s);
// As Go's Duration.String, with a trailing "m0s" shortened to "m" as AIS shows them ("5m", "45s", "1m30s").
std::string FormatGoDuration(std::chrono::milliseconds d);

}  // namespace ais
