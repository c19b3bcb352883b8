#include "remote/cache_jobs.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ais {
namespace {

constexpr size_t kQueueMax = 1024;
constexpr int64_t kAutoWorkers = 4;
constexpr int64_t kMaxWorkers = 32;

// Names (with their listed sizes) from the enumerating thread to the fetching ones; Close() ends
// it, Fail() stops it.
class NameQueue {
 public:
  bool Push(std::string name, uint64_t size) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return q_.size() < kQueueMax || stopped_; });
    if (stopped_) return false;
    q_.emplace_back(std::move(name), size);
    ready_.notify_one();
    return true;
  }
  bool Pop(std::pair<std::string, uint64_t>* out) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return !q_.empty() || closed_ || stopped_; });
    if (stopped_ || q_.empty()) return false;
    *out = std::move(q_.front());
    q_.pop_front();
    room_.notify_one();
    return true;
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }
  // The first failure stops everyone (an OK status: stop without an error, an abort).
  void Fail(Status st) {
    std::lock_guard lock(mu_);
    if (first_error_.ok()) first_error_ = std::move(st);
    stopped_ = true;
    ready_.notify_all();
    room_.notify_all();
  }
  Status first_error() {
    std::lock_guard lock(mu_);
    return first_error_;
  }
 private:
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::pair<std::string, uint64_t>> q_;  // names and listed sizes (0: unknown); guarded by mu_
  bool closed_ = false;        // guarded by mu_
  bool stopped_ = false;       // guarded by mu_
  Status first_error_;         // guarded by mu_
};

}  // namespace

Status RunPrefetch(CacheTier& tier, Store& store, JobControl& jc, const PrefetchArgs& args) {
  const bool list = args.sel.kind() == ObjectSelection::Kind::kList;
  // The size, when the blob threshold needs it: from the listing (0: unknown, ask S3).
  auto blob_for = [&](const std::string& name, uint64_t listed_size) -> Result<std::optional<BlobOptions>> {
    if (args.blob_threshold == 0) return std::optional<BlobOptions>();
    uint64_t size = listed_size;
    if (size == 0) {
      auto head = tier.Head(args.key, name);
      if (!head.ok()) return head.status();
      size = head->size;
    }
    if (size < args.blob_threshold) return std::optional<BlobOptions>();
    return std::optional<BlobOptions>(args.blob);
  };
  auto fetch_one = [&](const std::string& name, uint64_t listed_size) -> Status {
    bool replace = false;
    auto local = store.Head(args.key, name);
    if (local.ok()) {
      if (!args.latest) return Status::OK();
      auto same = tier.InSync(args.key, *local);
      if (same.ok() && *same) return Status::OK();
      if (!same.ok() && !same.status().IsNotFound()) return same.status();
      if (!same.ok()) return list ? same.status() : Status::OK();
      replace = true;
    } else if (!local.status().IsNotFound()) {
      return local.status();
    }
    auto blob = blob_for(name, listed_size);
    if (!blob.ok()) return blob.status().IsNotFound() && !list ? Status::OK() : blob.status();
    auto got = tier.ColdGet(args.key, name, replace, *blob);
    if (got.ok()) {
      jc.Add(1, static_cast<int64_t>(got->size));
      return Status::OK();
    }
    if (got.status().IsNotFound() && !list) return Status::OK();  // a range names objects that need not exist
    return got.status();
  };

  NameQueue queue;
  int64_t n = args.num_workers < 0 ? 1 : args.num_workers == 0 ? kAutoWorkers : std::min(args.num_workers, kMaxWorkers);
  std::vector<std::thread> workers;
  for (int64_t i = 0; i < n; ++i) {
    workers.emplace_back([&] {
      std::pair<std::string, uint64_t> item;
      while (queue.Pop(&item)) {
        if (jc.aborted()) {
          queue.Fail(Status::OK());  // wakes an enumerator waiting for room
          break;
        }
        Status st = fetch_one(item.first, item.second);
        if (st.ok()) continue;
        if (args.continue_on_err) {
          jc.AddError(st.message());
          continue;
        }
        queue.Fail(st);
      }
    });
  }
  Status enumerated;
  auto push = [&](const std::string& name, uint64_t size = 0) { return !jc.aborted() && queue.Push(name, size); };
  switch (args.sel.kind()) {
    case ObjectSelection::Kind::kList:
      for (const auto& name : args.sel.names()) {
        if (!push(name)) break;
      }
      break;
    case ObjectSelection::Kind::kRange:
      args.sel.tmpl().Expand([&](const std::string& name) { return push(name); });
      break;
    case ObjectSelection::Kind::kPrefix: {
      std::string token;
      do {
        auto page = tier.List(args.key, args.sel.tmpl().prefix, token, kMaxRemotePage, false);
        if (!page.ok()) {
          enumerated = page.status();
          break;
        }
        bool more = true;
        for (const auto& e : page->entries) {
          if (e.is_dir || e.name.ends_with('/')) continue;
          if (!(more = push(e.name, e.size))) break;
        }
        token = more ? page->next_token : "";
      } while (!token.empty());
      break;
    }
  }
  if (!enumerated.ok()) queue.Fail(enumerated);
  queue.Close();
  for (auto& w : workers) w.join();
  return queue.first_error();
}

Status RunEvict(Store& store, JobControl& jc, const std::string& key, const ObjectSelection& sel) {
  return sel.ForEach(store, key, [&jc] { return jc.aborted(); }, [&](const std::string& name) {
    Status st = store.Delete(key, name);
    if (st.ok()) jc.Add(1, 0);
    return st.IsNotFound() ? Status::OK() : st;
  });
}

}  // namespace ais
