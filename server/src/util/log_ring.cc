#include "util/log_ring.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kServerLogBytes = 4 << 20;
constexpr size_t kMaxLineBytes = 4096;  // one runaway message cannot evict the whole ring

char SeverityLetter(LogSeverity s) {
  switch (s) {
    case LogSeverity::kInfo: return 'I';
    case LogSeverity::kWarning: return 'W';
    case LogSeverity::kError: return 'E';
  }
  return 'I';
}

}  // namespace

void LogRing::Add(LogSeverity sev, std::string_view message) {
  if (static_cast<int>(sev) < level_.load(std::memory_order_relaxed)) return;
  auto now = std::chrono::system_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char head[32];
  std::snprintf(head, sizeof(head), "%c %02d:%02d:%02d.%06lld ", SeverityLetter(sev), tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<long long>(us % 1000000));
  std::string line = head;
  line.append(message.substr(0, kMaxLineBytes));
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  line.push_back('\n');
  std::lock_guard lock(mu_);
  bytes_ += line.size();
  lines_.push_back(Line{sev, std::move(line)});
  ++total_;
  while (bytes_ > max_bytes_ && !lines_.empty()) {
    bytes_ -= lines_.front().text.size();
    lines_.pop_front();
  }
}

std::string LogRing::Text(LogSeverity min) const {
  std::lock_guard lock(mu_);
  std::string out;
  out.reserve(bytes_);
  for (const auto& l : lines_) {
    if (l.sev >= min) out += l.text;
  }
  return out;
}

uint64_t LogRing::total_lines() const {
  std::lock_guard lock(mu_);
  return total_;
}

LogRing& ServerLog() {
  static LogRing ring(kServerLogBytes);
  return ring;
}

bool ParseLogSeverity(std::string_view s, LogSeverity* out) {
  if (s.empty() || IEquals(s, "info") || IEquals(s, "i")) {
    *out = LogSeverity::kInfo;
  } else if (IEquals(s, "warning") || IEquals(s, "w") || IEquals(s, "warn")) {
    *out = LogSeverity::kWarning;
  } else if (IEquals(s, "error") || IEquals(s, "e") || IEquals(s, "err")) {
    *out = LogSeverity::kError;
  } else {
    return false;
  }
  return true;
}

bool ParseLogLevel(std::string_view s, LogSeverity* out) {
  if (!s.empty() && s[0] >= '0' && s[0] <= '5' && (s.size() == 1 || s[1] == ' ')) {
    *out = LogSeverity::kInfo;
    return true;
  }
  return !s.empty() && ParseLogSeverity(s, out);
}

std::string_view LogLevelName(LogSeverity s) {
  switch (s) {
    case LogSeverity::kInfo: return "info";
    case LogSeverity::kWarning: return "warning";
    case LogSeverity::kError: return "error";
  }
  return "info";
}

}  // namespace ais
