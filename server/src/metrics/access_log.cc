#include "metrics/access_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <vector>

#include <nlohmann/json.hpp>

namespace ais {

Result<std::unique_ptr<AccessLog>> AccessLog::Open(const std::string& path, size_t max_queue) {
  if (path == "-") return std::unique_ptr<AccessLog>(new AccessLog(stderr, false, max_queue));
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (!f) return Status::IOError("access log " + path + ": " + std::strerror(errno));
  return std::unique_ptr<AccessLog>(new AccessLog(f, true, max_queue));
}

AccessLog::AccessLog(std::FILE* out, bool owned, size_t max_queue)
    : out_(out), owned_(owned), max_queue_(max_queue), writer_([this] { Run(); }) {}

AccessLog::~AccessLog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  writer_.join();
  if (owned_) std::fclose(out_);
}

void AccessLog::Record(AccessEntry e) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queue_) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(e));
    wake = queue_.size() == 1;  // the writer sleeps only on an empty queue
  }
  if (wake) cv_.notify_one();
}

uint64_t AccessLog::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

uint64_t AccessLog::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

std::string AccessLog::Format(const AccessEntry& e) {
  const int64_t secs = e.time_ns / 1000000000;
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char when[96];  // ample for any int fields snprintf may be asked to print (-Wformat-truncation)
  std::snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>((e.time_ns % 1000000000) / 1000));
  // nlohmann::json keeps keys sorted; the line is built by hand to keep AIS-log order, and each
  // string goes through the JSON encoder (escapes; invalid UTF-8 replaced).
  auto str = [](const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::string line = "{\"time\":\"";
  line.append(when).append("\",\"method\":").append(str(e.method));
  line.append(",\"path\":").append(str(e.path));
  line.append(",\"status\":").append(std::to_string(e.status));
  line.append(",\"bytes\":").append(std::to_string(e.bytes));
  line.append(",\"duration_us\":").append(std::to_string(e.duration_us));
  line.append(",\"remote\":").append(str(e.remote)).append("}\n");
  return line;
}

void AccessLog::Run() {
  std::deque<AccessEntry> batch;
  std::string text;
  for (;;) {
    bool stopping;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || !queue_.empty(); });
      batch.swap(queue_);
      stopping = stop_;
    }
    text.clear();
    for (const AccessEntry& e : batch) text += Format(e);
    if (!text.empty()) {
      std::fwrite(text.data(), 1, text.size(), out_);
      std::fflush(out_);
    }
    {
      std::lock_guard lock(mu_);
      written_ += batch.size();
    }
    batch.clear();
    if (stopping) {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;  // entries recorded during the last write are written too
    }
  }
}

}  // namespace ais
