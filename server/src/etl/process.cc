#include "etl/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <fstream>
#include <sstream>

namespace ais::etl {

namespace {

// The runtime asks for SIGTERM when its parent dies (PR_SET_PDEATHSIG), and Linux sends it when
// the parent *thread* ends: so every transformer is spawned by this one thread, which lives as
// long as the process.
class SpawnThread {
 public:
  static SpawnThread& Get() {
    static SpawnThread* t = new SpawnThread();  // never destroyed: it must outlive every spawn
    return *t;
  }
  template <typename T>
  T Run(std::function<T()> fn) {
    std::packaged_task<T()> task(std::move(fn));
    std::future<T> done = task.get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::packaged_task<void()>([&task] { task(); }));
    }
    cv_.notify_one();
    return done.get();
  }

 private:
  SpawnThread() {
    std::thread([this] {
      for (;;) {
        std::packaged_task<void()> t;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [this] { return !tasks_.empty(); });
          t = std::move(tasks_.front());
          tasks_.pop_front();
        }
        t();
      }
    }).detach();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> tasks_;  // guarded by mu_
};

std::string DescribeWait(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace

Result<std::unique_ptr<Process>> Process::Spawn(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& env, const std::string& cwd,
                                                std::function<void(const std::string&)> on_exit) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe");
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  // Nothing of the server's (sockets, object files) reaches the transformer.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  // posix_spawnp looks argv[0] up in this process's PATH.
  int rc = SpawnThread::Get().Run<int>(
      [&] { return ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data()); });
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    return Status::InvalidArgument("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  std::unique_ptr<Process> p(new Process());
  p->pid_ = pid;
  p->out_fd_ = pipefd[0];
  p->on_exit_ = std::move(on_exit);
  p->watcher_ = std::thread([raw = p.get()] { raw->Watch(); });
  return p;
}

Process::~Process() {
  Stop();
  if (watcher_.joinable()) watcher_.join();
  if (out_fd_ >= 0) ::close(out_fd_);
}

void Process::Append(const char* data, size_t n) {
  std::lock_guard lock(mu_);
  output_.append(data, n);
  if (output_.size() > kLogMax + kLogMax / 4) output_.erase(0, output_.size() - kLogMax);
}

void Process::Watch() {
  char buf[16384];
  bool pipe_open = true;
  for (;;) {
    if (pipe_open) {
      pollfd pfd{out_fd_, POLLIN, 0};
      int r = ::poll(&pfd, 1, 200);
      if (r > 0) {
        ssize_t n = ::read(out_fd_, buf, sizeof(buf));
        if (n > 0) Append(buf, static_cast<size_t>(n));
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) pipe_open = false;
      }
    } else {
      ::usleep(100'000);
    }
    int status = 0;
    pid_t w = ::waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      // Whatever is left in the pipe, then the group's stragglers (workers it forked) go too.
      while (pipe_open) {
        pollfd pfd{out_fd_, POLLIN, 0};
        if (::poll(&pfd, 1, 0) <= 0) break;
        ssize_t n = ::read(out_fd_, buf, sizeof(buf));
        if (n <= 0) break;
        Append(buf, static_cast<size_t>(n));
      }
      ::kill(-pid_, SIGKILL);
      std::string desc = DescribeWait(status);
      {
        std::lock_guard lock(mu_);
        exit_desc_ = desc;
        exited_ = true;
      }
      cv_.notify_all();
      if (on_exit_) on_exit_(desc);
      return;
    }
  }
}

std::string Process::exit_description() const {
  std::lock_guard lock(mu_);
  return exit_desc_;
}

std::string Process::Output() const {
  std::lock_guard lock(mu_);
  return output_.size() > kLogMax ? output_.substr(output_.size() - kLogMax) : output_;
}

bool Process::WaitExit(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, d, [this] { return exited_.load(); });
}

void Process::Terminate() {
  if (!exited_) ::kill(-pid_, SIGTERM);
}

void Process::Stop(std::chrono::milliseconds grace) {
  if (exited_) return;
  ::kill(-pid_, SIGTERM);
  if (!WaitExit(grace)) {
    ::kill(-pid_, SIGKILL);
    WaitExit(std::chrono::seconds(30));
  }
}

Process::Usage Process::ReadUsage() const {
  Usage u;
  std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after the ")" that ends the command name: state is field 3, utime 14, stime 15, rss 24.
    auto close = line.rfind(')');
    if (close != std::string::npos) {
      std::istringstream in(line.substr(close + 2));
      std::vector<std::string> f;
      std::string x;
      while (in >> x) f.push_back(x);
      if (f.size() > 21) {
        const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
        auto num = [](const std::string& t) {
          uint64_t v = 0;
          std::from_chars(t.data(), t.data() + t.size(), v);
          return v;
        };
        u.cpu_seconds = static_cast<double>(num(f[11]) + num(f[12])) / tick;
        u.rss_bytes = num(f[21]) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
      }
    }
  }
  return u;
}

}  // namespace ais::etl
