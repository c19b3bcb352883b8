#include "jobs/get_batch_jobs.h"

#include <condition_variable>
#include <map>
#include <vector>

namespace ais {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kPublishInterval{1};  // counters of long requests, while they run

}  // namespace

struct GetBatchJobs::State {
  std::mutex mu;
  std::condition_variable cv;  // the job's thread waits for work to end, an abort, or idle_end
  std::string id;              // set before the state is shared with any request
  // Guarded by mu:
  std::map<uint64_t, std::function<void()>> works;  // requests in flight, by ticket, with their cancel
  uint64_t next_ticket = 0;
  bool ended = false;  // aborted or idle too long: takes no more work
  Clock::time_point last_active;
  // Delivered, summed over requests; the job's thread publishes them to its JobControl.
  std::atomic<int64_t> objs{0};
  std::atomic<int64_t> bytes{0};

  // The job was aborted: no more work; cancel what is in flight.
  void Abort() {
    std::vector<std::function<void()>> cancels;
    {
      std::lock_guard lock(mu);
      ended = true;
      for (auto& [ticket, cancel] : works) {
        if (cancel) cancels.push_back(std::move(cancel));
        cancel = nullptr;
      }
    }
    cv.notify_all();
    for (auto& c : cancels) c();
  }

  // The job's thread: publishes counters and idleness until aborted or idle for `idle_end`.
  static Status Run(const std::shared_ptr<State>& self, JobControl& jc, std::chrono::milliseconds idle_end) {
    std::weak_ptr<State> weak = self;  // the callback may outlive the job (an abort by id after the end)
    jc.OnAbort([weak] {
      if (auto s = weak.lock()) s->Abort();
    });
    return self->Loop(jc, idle_end);
  }

  Status Loop(JobControl& jc, std::chrono::milliseconds idle_end) {
    int64_t published_objs = 0;
    int64_t published_bytes = 0;
    auto publish = [&] {
      int64_t o = objs.load(std::memory_order_relaxed);
      int64_t b = bytes.load(std::memory_order_relaxed);
      jc.Add(o - published_objs, b - published_bytes);
      published_objs = o;
      published_bytes = b;
    };
    std::unique_lock lock(mu);
    for (;;) {
      publish();
      jc.SetIdle(works.empty());
      if (ended) break;
      if (works.empty()) {
        Clock::time_point deadline = last_active + idle_end;
        if (Clock::now() >= deadline) {
          ended = true;
          break;
        }
        cv.wait_until(lock, deadline);
      } else {
        cv.wait_for(lock, kPublishInterval);
      }
    }
    lock.unlock();
    publish();
    return Status::OK();
  }
};

GetBatchJobs::GetBatchJobs(JobRegistry& registry, std::chrono::milliseconds idle_end)
    : registry_(registry), idle_end_(idle_end) {}

std::unique_ptr<GetBatchJobs::Work> GetBatchJobs::Begin(const std::string& bucket, std::function<void()> cancel) {
  std::lock_guard lock(mu_);
  // Jobs that ended take no more work: forget them (the registry keeps their snapshots).
  std::erase_if(current_, [](const auto& kv) {
    std::lock_guard state_lock(kv.second->mu);
    return kv.second->ended;
  });
  if (auto it = current_.find(bucket); it != current_.end()) {
    State& cur = *it->second;
    std::lock_guard state_lock(cur.mu);
    if (!cur.ended) {  // it may have ended since
      bool was_idle = cur.works.empty();
      uint64_t ticket = cur.next_ticket++;
      cur.works.emplace(ticket, std::move(cancel));
      if (was_idle) cur.cv.notify_all();  // busy again: the job's thread says so
      return std::unique_ptr<Work>(new Work(it->second, ticket));
    }
  }
  auto state = std::make_shared<State>();
  state->last_active = Clock::now();
  uint64_t ticket = state->next_ticket++;
  state->works.emplace(ticket, std::move(cancel));  // the job starts busy
  auto idle_end = idle_end_;
  state->id = registry_.Start("get-batch", bucket,
                              [state, idle_end](JobControl& jc) { return State::Run(state, jc, idle_end); });
  current_[bucket] = state;
  return std::unique_ptr<Work>(new Work(state, ticket));
}

GetBatchJobs::Work::~Work() {
  {
    std::lock_guard lock(state_->mu);
    state_->works.erase(ticket_);
    state_->last_active = Clock::now();
  }
  state_->cv.notify_all();  // publish this request's counters; maybe idle now
}

const std::string& GetBatchJobs::Work::job_id() const { return state_->id; }

void GetBatchJobs::Work::Add(int64_t objs, int64_t bytes) {
  state_->objs.fetch_add(objs, std::memory_order_relaxed);
  state_->bytes.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace ais
