// WorkerPool: threads kept across GetBatch requests, so that a batch does not pay for creating
// (and joining) its assembling and fetching threads. Tasks may block (on a full queue, on a
// window); a task waits for no other task, so the pool grows to as many threads as tasks run at
// once, up to `max_threads`. A thread idle for `linger` exits.
//
// Thread-safe. GetBatch's pool is owned by the server's BatchService (handlers/batch_stream.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace ais {

class WorkerPool {
 public:
  WorkerPool(size_t max_threads, std::chrono::milliseconds linger);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on an idle thread, or on a new one. False (and `task` not run) when
  // `max_threads` tasks are running or the pool is shutting down.
  bool Run(std::function<void()> task);
  // Refuses new tasks and waits until every running task returned and every thread exited.
  void Shutdown();

  size_t threads() const;  // alive now, busy or idle

 private:
  void Loop();

  const size_t max_threads_;
  const std::chrono::milliseconds linger_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // idle threads wait for a task
  std::condition_variable exit_cv_;  // Shutdown waits for the threads to exit
  // Guarded by mu_:
  std::deque<std::function<void()>> tasks_;  // handed to idle threads; never more than idle_
  size_t threads_ = 0;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace ais
