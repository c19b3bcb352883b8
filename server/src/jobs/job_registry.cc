#include "jobs/job_registry.h"

#include <algorithm>
#include <chrono>

#include "util/clock.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kKeepFinished = 1024;

}  // namespace

void JobControl::Abort() {
  std::function<void()> fn;
  {
    std::lock_guard lock(err_mu_);
    aborted_.store(true, std::memory_order_relaxed);
    fn = std::move(on_abort_);
    on_abort_ = nullptr;
  }
  aborted_cv_.notify_all();
  if (fn) fn();
}

bool JobControl::WaitAborted(std::chrono::milliseconds d) {
  std::unique_lock lock(err_mu_);
  return aborted_cv_.wait_for(lock, d, [this] { return aborted(); });
}

void JobControl::OnAbort(std::function<void()> fn) {
  {
    std::lock_guard lock(err_mu_);
    if (!aborted()) {
      on_abort_ = std::move(fn);
      return;
    }
  }
  fn();
}

void JobControl::AddError(const std::string& msg) {
  std::lock_guard lock(err_mu_);
  if (num_errs_++ == 0) first_err_ = msg;
}

std::string JobControl::SoftErrors() const {
  std::lock_guard lock(err_mu_);
  if (num_errs_ <= 1) return first_err_;
  return first_err_ + " (and " + std::to_string(num_errs_ - 1) + " more errors)";
}

JobRegistry::~JobRegistry() {
  std::vector<std::shared_ptr<Job>> jobs;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, job] : jobs_) {
      jobs.push_back(job);
      if (job->thread.joinable()) threads.push_back(std::move(job->thread));
    }
  }
  for (auto& j : jobs) j->control.Abort();  // outside mu_: abort callbacks may start jobs
  for (auto& t : threads) t.join();
}

std::string JobRegistry::Start(std::string kind, std::string bucket, std::function<Status(JobControl&)> fn,
                               std::string id) {
  JobOptions opts;
  opts.id = std::move(id);
  return Start(std::move(kind), std::move(bucket), std::move(fn), std::move(opts));
}

std::string JobRegistry::Start(std::string kind, std::string bucket, std::function<Status(JobControl&)> fn,
                               JobOptions opts) {
  std::lock_guard lock(mu_);
  PruneLocked();
  auto job = std::make_shared<Job>();
  job->info.id = opts.id.empty() ? RandomId(10) : std::move(opts.id);
  job->info.kind = std::move(kind);
  job->info.bucket = std::move(bucket);
  job->info.dst_bucket = std::move(opts.dst_bucket);
  job->info.ctlmsg = std::move(opts.ctlmsg);
  job->info.start_ns = NowNs();
  Job* raw = job.get();
  std::string job_id = raw->info.id;
  jobs_[job_id] = job;
  LogInfo(raw->info.kind + "[" + job_id + "] started" + (raw->info.ctlmsg.empty() ? "" : ": " + raw->info.ctlmsg));
  bool idles_after = opts.idles_after;
  raw->thread = std::thread([this, raw, idles_after, fn = std::move(fn)] {
    Status st = fn(raw->control);
    if (st.ok() && idles_after && !raw->control.aborted()) {
      raw->control.SetIdle(true);
      raw->control.WaitAborted(idle_timeout_);
    }
    std::lock_guard l(mu_);
    raw->info.err = st.ok() ? "" : st.message();
    raw->info.aborted = raw->control.aborted();
    raw->info.end_ns = NowNs();
    std::string name = raw->info.kind + "[" + raw->info.id + "]";
    if (raw->info.aborted) {
      LogWarning(name + " aborted");
    } else if (!st.ok()) {
      LogError(name + " failed: " + st.message());
    } else if (std::string soft = raw->control.SoftErrors(); !soft.empty()) {
      LogWarning(name + " finished with errors: " + soft);
    } else {
      LogInfo(name + " finished");
    }
  });
  return job_id;
}

JobSnapshot JobRegistry::SnapshotLocked(const Job& job) const {
  JobSnapshot s = job.info;
  s.objs = job.control.objs_.load();
  s.bytes = job.control.bytes_.load();
  s.soft_err = job.control.SoftErrors();
  s.idle = s.running() && job.control.idle_.load(std::memory_order_relaxed);
  return s;
}

std::optional<JobSnapshot> JobRegistry::Get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return SnapshotLocked(*it->second);
}

std::vector<JobSnapshot> JobRegistry::Query(const std::string& id, const std::string& kind,
                                            const std::string& bucket, bool only_running) const {
  std::vector<JobSnapshot> out;
  std::lock_guard lock(mu_);
  for (auto& [jid, job] : jobs_) {
    if (!id.empty() && jid != id) continue;
    if (!kind.empty() && job->info.kind != kind) continue;
    if (!bucket.empty() && job->info.bucket != bucket) continue;
    if (only_running && !job->info.running()) continue;
    out.push_back(SnapshotLocked(*job));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.start_ns > b.start_ns; });
  return out;
}

bool JobRegistry::Abort(const std::string& id) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return false;
    job = it->second;
  }
  job->control.Abort();  // outside mu_: the job's abort callback may take its own locks
  return true;
}

void JobRegistry::PruneLocked() {
  size_t finished = 0;
  for (auto& [id, job] : jobs_) finished += job->info.running() ? 0 : 1;
  if (finished <= kKeepFinished) return;
  std::vector<std::pair<int64_t, std::string>> order;
  for (auto& [id, job] : jobs_) {
    if (!job->info.running()) order.emplace_back(job->info.end_ns, id);
  }
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i + kKeepFinished < order.size(); ++i) {
    auto it = jobs_.find(order[i].second);
    if (it->second->thread.joinable()) it->second->thread.join();  // finished: returns at once
    jobs_.erase(it);
  }
}

}  // namespace ais
