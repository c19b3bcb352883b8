// Wall-clock time as AIS stores and reports it: nanoseconds since the Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace ais {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ais
