#include "util/go_duration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ais {

Result<std::chrono::milliseconds> ParseGoDuration(std::string_view s) {
  const std::string bad = "invalid duration \"" + std::string(s.substr(0, 64)) + "\"";
  if (s.empty()) return Status::InvalidArgument(bad);
  if (s == "0") return std::chrono::milliseconds(0);
  double total_ms = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return Status::InvalidArgument(bad);
    char* end = nullptr;
    std::string num(s.substr(start, i - start));
    double v = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size()) return Status::InvalidArgument(bad);
    size_t u = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string_view unit = s.substr(u, i - u);
    double scale = 0;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1e3;
    else if (unit == "m") scale = 60e3;
    else if (unit == "h") scale = 3600e3;
    else if (unit == "us" || unit == "µs") scale = 1e-3;
    else if (unit == "ns") scale = 1e-6;
    else return Status::InvalidArgument(bad);
    total_ms += v * scale;
  }
  if (total_ms > 1e12) return Status::InvalidArgument(bad);
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(total_ms)));
}

std::string FormatGoDuration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms == 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  const int64_t h = ms / 3'600'000, m = (ms / 60'000) % 60, sec_ms = ms % 60'000;
  std::string secs = std::to_string(sec_ms / 1000);
  if (sec_ms % 1000) {
    std::string frac = std::to_string(1000 + sec_ms % 1000).substr(1);
    while (frac.back() == '0') frac.pop_back();
    secs += "." + frac;
  }
  // Go's Duration.String: "1h0m0s", "5m0s", "1m30s", "45s".
  std::string out = h ? std::to_string(h) + "h" + std::to_string(m) + "m" + secs + "s"
                  : m ? std::to_string(m) + "m" + secs + "s"
                      : secs + "s";
  if (out.ends_with("m0s")) out.resize(out.size() - 2);
  return out;
}

}  // namespace ais
