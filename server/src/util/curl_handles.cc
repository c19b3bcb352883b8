#include "util/curl_handles.h"

namespace ais {

CurlHandles::~CurlHandles() {
  for (CURL* c : idle_) curl_easy_cleanup(c);
}

CURL* CurlHandles::Get() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      CURL* c = idle_.back();
      idle_.pop_back();
      curl_easy_reset(c);
      return c;
    }
  }
  return curl_easy_init();
}

void CurlHandles::Put(CURL* c) {
  {
    std::lock_guard lock(mu_);
    if (idle_.size() < max_idle_) {
      idle_.push_back(c);
      return;
    }
  }
  curl_easy_cleanup(c);
}

}  // namespace ais
