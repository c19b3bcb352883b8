// AccessLog: the structured access log, one JSON line per request (--access-log FILE, "-" for
// stderr; off by default):
//   {"time":"2026-11-26T12:00:00.123456Z","method":"GET","path":"/v1/objects/b/o","status":200,
//    "bytes":10240,"duration_us":85,"remote":"127.0.0.1:50412"}
// `path` is without the query (a presigned URL's query carries a token); `bytes` the reply's
// body bytes.
//
// The I/O threads never wait for the file: Record appends to a bounded queue (a short critical
// section, no I/O, no formatting) and a writer thread formats and writes the lines, flushing at
// least once a second. A full queue drops the entry and counts it (dropped(), also in
// GET /metrics as ais_target_access_log_dropped_count). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "util/status.h"

namespace ais {

struct AccessEntry {
  int64_t time_ns = 0;  // system clock, when the request was answered
  std::string method;
  std::string path;
  unsigned status = 0;
  uint64_t bytes = 0;
  uint64_t duration_us = 0;
  std::string remote;
};

class AccessLog {
 public:
  static constexpr size_t kDefaultMaxQueue = 16384;

  // `path`: a file, appended to (created 0644), or "-" for stderr.
  static Result<std::unique_ptr<AccessLog>> Open(const std::string& path, size_t max_queue = kDefaultMaxQueue);
  ~AccessLog();  // writes what is queued, then stops the writer
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Queues the entry, or drops it (counted) when the queue is full. Never blocks on I/O.
  void Record(AccessEntry e);
  uint64_t dropped() const;
  uint64_t written() const;  // lines written so far

  // The line of `e`, '\n' ended (also for tests).
  static std::string Format(const AccessEntry& e);

 private:
  AccessLog(std::FILE* out, bool owned, size_t max_queue);
  void Run();

  std::FILE* const out_;
  const bool owned_;  // close out_ at the end (not stderr)
  const size_t max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<AccessEntry> queue_;  // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  uint64_t dropped_ = 0;           // guarded by mu_
  uint64_t written_ = 0;           // guarded by mu_
  std::thread writer_;             // last: starts after the members it reads exist
};

}  // namespace ais
