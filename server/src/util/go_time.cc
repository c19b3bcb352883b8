#include "util/go_time.h"

#include <cstdio>
#include <ctime>

namespace ais {

std::string GoTimeText(int64_t unix_ns) {
  if (unix_ns == 0) return "0001-01-01T00:00:00Z";
  const std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%09lld", static_cast<long long>(unix_ns % 1'000'000'000));
  std::string f = frac;
  while (f.back() == '0') f.pop_back();
  if (f != ".") out += f;
  return out + "Z";
}

}  // namespace ais
