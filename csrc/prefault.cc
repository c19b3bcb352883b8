#include "prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL) and nothing is done
#endif

namespace aisnative {

Prefaulter::Prefaulter(char* data, size_t size) {
  if (size < kMinSize) return;
  thread_ = std::thread([this, data, size] { Run(data, size); });
}

Prefaulter::~Prefaulter() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void Prefaulter::Run(char* data, size_t size) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  // madvise takes page-aligned ranges: from the first whole page of the buffer on (the partial
  // pages at its ends are the reader's to fault).
  uintptr_t at = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(page - 1);
  while (at < end && !stop_.load(std::memory_order_relaxed)) {
    const uintptr_t n = std::min<uintptr_t>(kStep, end - at);
    if (::madvise(reinterpret_cast<void*>(at), n, MADV_POPULATE_WRITE) != 0) return;
    at += n;
  }
}

}  // namespace aisnative
