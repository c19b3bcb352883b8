// Times as Go's encoding/json writes a time.Time (RFC 3339 with nanoseconds, trailing zeros
// dropped), which AIS's JSON carries and its CLI parses.
#pragma once

#include <cstdint>
#include <string>

namespace ais {

// `unix_ns` (nanoseconds since the Unix epoch, UTC) as Go marshals it; 0 is Go's zero time,
// "0001-01-01T00:00:00Z".
std::string GoTimeText(int64_t unix_ns);

}  // namespace ais
