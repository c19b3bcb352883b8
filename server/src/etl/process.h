// One transformer as a local process (the pod AIS would start): spawned in a process group of
// its own with stdout and stderr captured, watched until it exits, stopped with its whole group.
//
// Invariants: the process is reaped by its watcher thread, never by anyone else, so its pid is
// not reused while this object lives; after Stop() returns (or the destructor), no process of
// its group is left running. The output kept is bounded (the last kLogMax bytes).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/status.h"

namespace ais::etl {

class Process {
 public:
  static constexpr size_t kLogMax = 1 << 20;

  // Runs `argv` (argv[0] looked up in PATH) with exactly `env` ("K=V") in `cwd`, every file
  // descriptor of this process closed but its stdout/stderr pipe. `on_exit` runs once, on the
  // watcher thread, with the exit description ("exited with code 1", "killed by signal 9").
  static Result<std::unique_ptr<Process>> Spawn(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& env, const std::string& cwd,
                                                std::function<void(const std::string&)> on_exit);
  ~Process();  // Stop()
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool exited() const { return exited_.load(); }
  std::string exit_description() const;
  // What it wrote to stdout and stderr (the last kLogMax bytes).
  std::string Output() const;
  // Waits up to `d` for the process to exit; true if it did.
  bool WaitExit(std::chrono::milliseconds d);
  // SIGTERM to its process group, SIGKILL after `grace`; returns once the process is reaped
  // and its group is killed.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // SIGTERM to its process group, without waiting (then Stop(): several stop at once).
  void Terminate();
  // CPU seconds (user + system) and resident bytes of the process itself, from /proc.
  struct Usage {
    double cpu_seconds = 0;
    uint64_t rss_bytes = 0;
  };
  Usage ReadUsage() const;

 private:
  Process() = default;
  void Watch();  // the watcher thread: reads the pipe, reaps the process
  void Append(const char* data, size_t n);

  pid_t pid_ = -1;
  int out_fd_ = -1;  // read end of the stdout/stderr pipe
  std::function<void(const std::string&)> on_exit_;
  std::atomic<bool> exited_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string output_;     // guarded by mu_
  std::string exit_desc_;  // guarded by mu_
  std::thread watcher_;
};

}  // namespace ais::etl
