// libcurl easy handles kept for reuse: a handle keeps its connections alive, so a call that takes
// an idle one reuses a connection another call (on any thread) left open. Thread-safe.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace ais {

class CurlHandles {
 public:
  explicit CurlHandles(size_t max_idle = 64) : max_idle_(max_idle) {}
  ~CurlHandles();
  CurlHandles(const CurlHandles&) = delete;
  CurlHandles& operator=(const CurlHandles&) = delete;

  // An idle handle with its options reset (its connections kept), else a new one; nullptr when
  // libcurl cannot make one.
  CURL* Get();
  // Returns `c` for reuse (cleaned up when `max_idle` wait already).
  void Put(CURL* c);

 private:
  const size_t max_idle_;
  std::mutex mu_;
  std::vector<CURL*> idle_;  // guarded by mu_
};

}  // namespace ais
