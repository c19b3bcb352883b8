// LogRing: the server's own log, kept in memory (bounded) so clients can read it over the API
// (GET /v1/reverse/daemon?what=log), as they read a real AIS node's log files.
//
// Lines look like glog/AIS nlog: "<I|W|E> 15:04:05.000000 <message>". The ring holds at most
// `max_bytes` of text; the oldest lines go first. Thread-safe.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

namespace ais {

enum class LogSeverity { kInfo = 0, kWarning = 1, kError = 2 };

class LogRing {
 public:
  explicit LogRing(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Keeps the line if `sev` is at least the level (else drops it, before taking any lock).
  void Add(LogSeverity sev, std::string_view message);
  // The level: lines below it are not kept (config log.level, --log-level; info by default).
  // Settable at run time, from any thread; lines already kept stay.
  void set_level(LogSeverity level) { level_.store(static_cast<int>(level), std::memory_order_relaxed); }
  LogSeverity level() const { return static_cast<LogSeverity>(level_.load(std::memory_order_relaxed)); }
  // Lines of severity >= min, oldest first, each ending in '\n'.
  std::string Text(LogSeverity min) const;
  // Lines ever kept (including those the bound dropped since; not those below the level).
  uint64_t total_lines() const;

 private:
  struct Line {
    LogSeverity sev;
    std::string text;
  };
  const size_t max_bytes_;
  std::atomic<int> level_{static_cast<int>(LogSeverity::kInfo)};
  mutable std::mutex mu_;
  std::deque<Line> lines_;  // guarded by mu_
  size_t bytes_ = 0;        // guarded by mu_
  uint64_t total_ = 0;      // guarded by mu_
};

// The process-wide log (4 MiB).
LogRing& ServerLog();
inline void LogInfo(std::string_view m) { ServerLog().Add(LogSeverity::kInfo, m); }
inline void LogWarning(std::string_view m) { ServerLog().Add(LogSeverity::kWarning, m); }
inline void LogError(std::string_view m) { ServerLog().Add(LogSeverity::kError, m); }

// "info"/"i", "warning"/"w", "error"/"e" (case-insensitive); "" is info. False if unknown.
bool ParseLogSeverity(std::string_view s, LogSeverity* out);
// A log level as config log.level and --log-level take it: a severity (ParseLogSeverity, "" not
// allowed), or AIS's verbosity "0".."5" (optionally followed by modules, "3 fs,xs"), which keeps
// every severity (AIS's verbosity adds debug lines this server does not write). False if unknown.
bool ParseLogLevel(std::string_view s, LogSeverity* out);
// "info", "warning", "error".
std::string_view LogLevelName(LogSeverity s);

}  // namespace ais
