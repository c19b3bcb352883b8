// Prefaulter: faults in the pages of a fresh destination buffer on a thread of its own, ahead of a
// reader that fills the buffer front to back (a large body received into one new bytes object).
// Memory new to a process costs a page fault on the first touch of each 4 KiB page (more in a
// VM, whose host backs guest pages on first touch too); taken inside the reader's recv copies,
// those faults halve a single stream's rate, while populated ahead on another CPU they overlap
// with the transfer.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>

namespace aisnative {

class Prefaulter {
 public:
  // Buffers smaller than this are filled before a thread would be of use.
  static constexpr size_t kMinSize = 32 << 20;
  // Pages populated per step; the thread checks for stop between steps.
  static constexpr size_t kStep = 4 << 20;

  // Starts populating [data, data + size) front to back if size >= kMinSize. Only faults pages
  // in (MADV_POPULATE_WRITE): never writes a byte, so the reader may fill them meanwhile.
  // REQUIRES: the buffer outlives the Prefaulter.
  Prefaulter(char* data, size_t size);
  // Stops the thread (after its current step) and joins it.
  ~Prefaulter();
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;

 private:
  void Run(char* data, size_t size);

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace aisnative
