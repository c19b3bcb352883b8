#include "archive/worker_pool.h"

#include <system_error>
#include <thread>

namespace ais {

WorkerPool::WorkerPool(size_t max_threads, std::chrono::milliseconds linger)
    : max_threads_(max_threads), linger_(linger) {}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::Run(std::function<void()> task) {
  std::unique_lock lock(mu_);
  if (stopping_) return false;
  if (tasks_.size() < idle_) {  // an idle thread will take it
    tasks_.push_back(std::move(task));
    lock.unlock();
    work_cv_.notify_one();
    return true;
  }
  if (threads_ - idle_ + tasks_.size() >= max_threads_) return false;
  ++threads_;
  tasks_.push_back(std::move(task));
  ++idle_;  // the new thread counts as idle until it takes the task
  try {
    std::thread([this] { Loop(); }).detach();
  } catch (const std::system_error&) {
    --threads_;
    --idle_;
    tasks_.pop_back();
    return false;
  }
  return true;
}

void WorkerPool::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    // Here this thread is counted in idle_. Tasks handed over before a shutdown still run.
    work_cv_.wait_for(lock, linger_, [&] { return !tasks_.empty() || stopping_; });
    if (tasks_.empty()) {  // lingered long enough, or shutting down
      --idle_;
      --threads_;
      if (threads_ == 0) exit_cv_.notify_all();
      return;
    }
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    lock.unlock();
    task();
    task = nullptr;  // release what the task holds before counting as idle
    lock.lock();
    ++idle_;
  }
}

void WorkerPool::Shutdown() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  work_cv_.notify_all();
  exit_cv_.wait(lock, [&] { return threads_ == 0; });
}

size_t WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

}  // namespace ais
