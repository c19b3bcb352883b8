#include "download/downloader.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <thread>
#include <vector>

#include "download/byte_throttle.h"
#include "download/etl_sink.h"
#include "download/link_fetch.h"
#include "store/bck.h"
#include "util/bounded_queue.h"
#include "util/clock.h"
#include "util/log_ring.h"
#include "util/go_time.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kQueueMax = 1024;  // files listed ahead of the workers
constexpr double kTimeoutFactor = 1.2;  // AIS reqTimeoutFactor: a timed-out attempt's successor waits longer
// A file larger than one part comes as concurrent ranges of this size (when the job sets no
// `limits.connections`: then it gets exactly the connections it asked for).
constexpr uint64_t kRangePart = 32ULL << 20;
constexpr int kRangeWorkers = 4;  // range GETs at once per file

}  // namespace

// One file in progress; its counters are read by status queries while a worker writes them.
struct Downloader::Task {
  DownloadItem item;
  int64_t start_ns = 0;
  std::atomic<int64_t> downloaded{0};
  std::atomic<int64_t> total{0};
};

// A job: fixed facts, counters, and the per-file status lines.
struct Downloader::Job {
  // Constant after Start.
  std::string id, xid, description, bucket;
  DownloadRequest req;
  int64_t total = 0;  // -1: unknown (backend)
  int64_t start_ns = 0;
  std::unique_ptr<ByteThrottle> throttle;  // null: no bytes_per_hour
  // Counters (dload.Job).
  std::atomic<int64_t> finished_cnt{0}, scheduled_cnt{0}, skipped_cnt{0}, error_cnt{0};
  std::atomic<bool> all_dispatched{false}, aborted{false};
  std::atomic<int64_t> finish_ns{0};  // 0 while running
  // Status lines.
  mutable std::mutex mu;
  std::map<const Task*, std::shared_ptr<Task>> current;  // guarded by mu
  std::vector<nlohmann::json> finished;                   // guarded by mu (TaskDlInfo)
  std::vector<nlohmann::json> errors;                     // guarded by mu (TaskErrInfo)

  bool running() const { return finish_ns.load() == 0; }

  nlohmann::json JobJson() const {
    return {{"id", id},
            {"xaction_id", xid},
            {"description", description},
            {"started_time", GoTimeText(start_ns)},
            {"finished_time", GoTimeText(finish_ns.load())},
            {"finished_cnt", finished_cnt.load()},
            {"scheduled_cnt", scheduled_cnt.load()},
            {"skipped_cnt", skipped_cnt.load()},
            {"error_cnt", error_cnt.load()},
            {"total", total},
            {"all_dispatched", all_dispatched.load()},
            {"aborted", aborted.load()}};
  }
  static nlohmann::json TaskJson(const Task& t, int64_t end_ns) {
    nlohmann::json j = {{"name", t.item.name}, {"downloaded", std::to_string(t.downloaded.load())}};
    if (int64_t total = t.total.load(); total != 0) j["total"] = std::to_string(total);
    j["start_time"] = GoTimeText(t.start_ns);
    j["end_time"] = GoTimeText(end_ns);
    return j;
  }
  void Finished(const std::shared_ptr<Task>& t, bool skipped) {
    nlohmann::json line = TaskJson(*t, NowNs());
    std::lock_guard lock(mu);
    current.erase(t.get());
    if (finished.size() < kMaxStatusLines) finished.push_back(std::move(line));
    if (skipped) skipped_cnt.fetch_add(1);
    finished_cnt.fetch_add(1);  // after the line, so that a status that counts it shows it
  }
  void Failed(const std::shared_ptr<Task>& t, const std::string& err) {
    std::lock_guard lock(mu);
    current.erase(t.get());
    if (errors.size() < kMaxStatusLines) errors.push_back({{"name", t->item.name}, {"error", err}});
    error_cnt.fetch_add(1);
  }
  void Dropped(const std::shared_ptr<Task>& t) {  // aborted: neither finished nor failed
    std::lock_guard lock(mu);
    current.erase(t.get());
  }
};

Downloader::Downloader(Store& store, JobRegistry& jobs, CacheTier& remote, DownloaderOptions opts)
    : store_(store), jobs_(jobs), remote_(remote), opts_(std::move(opts)) {}

Downloader::~Downloader() { Shutdown(); }

void Downloader::Shutdown() {
  std::unique_lock lock(mu_);
  shut_down_ = true;
  for (auto& [id, job] : byid_) {
    if (job->running()) jobs_.Abort(job->xid);
  }
  done_cv_.wait(lock, [&] { return running_ == 0; });
}

Result<std::string> Downloader::Start(DownloadRequest req, const std::string& bucket) {
  if (!req.etl_name.empty()) {
    if (auto etl = FindEtl(req.etl_name); !etl.ok()) return etl.status();
  }
  auto job = std::make_shared<Job>();
  job->id = "dnl-" + RandomId(12);
  job->xid = RandomId(10);
  job->bucket = bucket;
  job->description = req.description.empty() ? req.DefaultDescription(BucketCname(bucket)) : req.description;
  job->total = req.Total();
  job->start_ns = NowNs();
  if (req.bytes_per_hour > 0) job->throttle = std::make_unique<ByteThrottle>(req.bytes_per_hour);
  job->req = std::move(req);
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return ais::Status::Unavailable("the server is stopping: no new download jobs");
    byid_[job->id] = job;
    ++running_;
  }
  JobOptions jopts;
  jopts.id = job->xid;
  jopts.ctlmsg = job->description;
  jobs_.Start("download", bucket, [this, job](JobControl& jc) {
    jc.OnAbort([job] {
      job->aborted.store(true);
      if (job->throttle) job->throttle->Wake();
    });
    {
      std::lock_guard lock(mu_);  // a Shutdown between Start's count and the registry's start
      if (shut_down_) jc.Abort();  // found no job to abort
    }
    ais::Status st = Run(jc, job);
    job->finish_ns.store(NowNs());
    std::lock_guard lock(mu_);
    --running_;
    done_cv_.notify_all();
    return st;
  }, std::move(jopts));
  return job->id;
}

ais::Status Downloader::Run(JobControl& jc, const std::shared_ptr<Job>& job) {
  const DownloadRequest& req = job->req;
  int64_t workers = req.connections > 0 ? std::min(req.connections, kMaxConnections)
                                        : std::clamp<int64_t>(opts_.workers_per_mountpath *
                                                                  static_cast<int64_t>(store_.mountpaths().count()),
                                                              1, 64);
  if (req.type == DownloadType::kSingle) workers = 1;
  BoundedQueue<std::pair<DownloadItem, uint64_t>> queue(kQueueMax);  // files from the lister to the workers
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < workers; ++i) {
    threads.emplace_back([&] {
      while (auto next = queue.Pop()) {
        if (jc.aborted()) break;
        RunTask(jc, *job, next->first, next->second);
      }
    });
  }
  auto push = [&](DownloadItem item, uint64_t size) {
    if (jc.aborted()) return false;
    job->scheduled_cnt.fetch_add(1);
    return queue.Push({std::move(item), size});
  };
  ais::Status listed;
  switch (req.type) {
    case DownloadType::kSingle:
    case DownloadType::kMulti:
      for (const DownloadItem& item : req.items) {
        if (!push(item, 0)) break;
      }
      break;
    case DownloadType::kRange: {
      const std::string dir = req.subdir.empty() ? "" : req.subdir + "/";
      req.tmpl.Expand([&](const std::string& link) {
        auto name = ObjectNameOfLink(link);
        if (!name.ok()) {  // a link of the template that names no object: that file's error
          job->scheduled_cnt.fetch_add(1);
          auto t = std::make_shared<Task>();
          t->item = {link, link};
          job->Failed(t, name.status().message());
          return !jc.aborted();
        }
        return push({dir + *name, NormalizeLink(link)}, 0);
      });
      break;
    }
    case DownloadType::kBackend: {
      std::set<std::string> names;  // for `synchronize`: what the remote has
      std::string token;
      do {
        auto page = remote_.List(job->bucket, req.prefix, token, kMaxRemotePage, false);
        if (!page.ok()) {
          listed = page.status();
          break;
        }
        bool go = true;
        for (const auto& e : page->entries) {
          if (e.is_dir || e.name.ends_with('/') || !e.name.ends_with(req.suffix)) continue;
          if (req.sync) names.insert(e.name);
          if (!(go = push({e.name, ""}, e.size))) break;
        }
        token = go ? page->next_token : "";
      } while (!token.empty());
      if (listed.ok() && req.sync && !jc.aborted()) {
        SyncDeleted(jc, *job, [&names](const std::string& n) { return names.contains(n); });
      }
      break;
    }
  }
  if (!jc.aborted()) job->all_dispatched.store(true);
  queue.Close();
  if (jc.aborted()) queue.Stop();
  for (auto& t : threads) t.join();
  if (!listed.ok()) {
    std::lock_guard lock(job->mu);
    job->errors.push_back({{"name", req.prefix}, {"error", "listing " + BucketCname(job->bucket) + ": " + listed.message()}});
    job->error_cnt.fetch_add(1);
    return listed;
  }
  return ais::Status::OK();
}

void Downloader::RunTask(JobControl& jc, Job& job, const DownloadItem& item, uint64_t listed_size) {
  auto task = std::make_shared<Task>();
  task->item = item;
  task->start_ns = NowNs();
  if (listed_size > 0) task->total.store(static_cast<int64_t>(listed_size));
  {
    std::lock_guard lock(job.mu);
    job.current[task.get()] = task;
  }
  bool skipped = false;
  ais::Status st = item.link.empty() ? FetchRemote(job, *task, &skipped) : FetchHttp(jc, job, *task, &skipped);
  if (jc.aborted() && !st.ok()) {
    job.Dropped(task);
    return;
  }
  if (!st.ok()) {
    job.Failed(task, st.message());
    jc.AddError(item.name + ": " + st.message());
    return;
  }
  if (!skipped) jc.Add(1, task->downloaded.load());
  job.Finished(task, skipped);
}

ais::Status Downloader::FetchHttp(JobControl& jc, Job& job, Task& task, bool* skipped) {
  const DownloadRequest& req = job.req;
  const EgressPolicy egress{.allow_private = opts_.allow_private(), .allow_loopback = opts_.allow_loopback};
  CURL* curl = curls_.Get();
  if (curl == nullptr) return ais::Status::IOError("libcurl: out of handles");
  struct Release {
    CurlHandles& pool;
    CURL* c;
    ~Release() { pool.Put(c); }
  } release{curls_, curl};
  const std::vector<std::pair<std::string, std::string>>* headers = req.headers.empty() ? nullptr : &req.headers;

  // An object already here is skipped when the link still has the same size (and, where the
  // source says, version and ETag): AIS's CompareObjects. Not through an ETL: the object is
  // the transformer's output, whose size says nothing of the link's.
  auto local = req.etl_name.empty() ? store_.Head(job.bucket, task.item.name) : Result<ObjectMeta>(Status::NotFound(""));
  if (local.ok()) {
    auto head = HeadLink(curl, task.item.link, egress, headers);
    curl_easy_reset(curl);
    if (head.ok() && head->size == static_cast<int64_t>(local->size)) {
      bool same = true;
      for (const auto& [k, v] : head->custom) {
        const std::string* mine = local->custom_value(k);
        if ((k == "version" || k == "ETag") && mine != nullptr && *mine != v) same = false;
      }
      if (same) {
        task.total.store(head->size);
        task.downloaded.store(head->size);
        *skipped = true;
        return ais::Status::OK();
      }
    }
  }

  LinkFetchOptions fo;
  fo.egress = egress;
  fo.timeout = req.timeout.count() > 0 ? req.timeout : opts_.default_timeout;
  fo.headers = headers;
  fo.throttle = job.throttle.get();
  fo.aborted = [&jc] { return jc.aborted(); };
  fo.downloaded = &task.downloaded;
  fo.total = &task.total;
  if (req.connections == 0 && req.etl_name.empty()) fo.first_range = kRangePart;
  ais::Status last;
  for (int attempt = 0; attempt < kAttempts && !jc.aborted(); ++attempt) {
    if (attempt > 0) curl_easy_reset(curl);
    FetchFailure failure;
    auto sink = SinkFor(job, task.item, fo);
    if (!sink.ok()) return sink.status();
    auto got = FetchLink(curl, task.item.link, fo, **sink, &failure);
    if (got.ok()) {
      task.total.store(static_cast<int64_t>(got->size));
      task.downloaded.store(static_cast<int64_t>(got->size));
      return ais::Status::OK();
    }
    last = got.status();
    if (!failure.retry) break;
    if (failure.timed_out) {
      fo.timeout = std::chrono::milliseconds(static_cast<int64_t>(static_cast<double>(fo.timeout.count()) * kTimeoutFactor));
    }
  }
  return last;
}

Result<std::unique_ptr<FetchSink>> Downloader::SinkFor(const Job& job, const DownloadItem& item,
                                                      const LinkFetchOptions& fo) {
  if (job.req.etl_name.empty()) {
    std::optional<RangeFetch> ranges;
    if (fo.first_range > 0) {
      ranges = RangeFetch{.curls = &curls_, .link = item.link, .opts = &fo, .part_size = kRangePart, .workers = kRangeWorkers};
    }
    return ObjectSink(store_, job.bucket, item.name, std::move(ranges), ThroughFor(job, item.name));
  }
  auto etl = FindEtl(job.req.etl_name);
  if (!etl.ok()) return etl.status();
  const Mountpaths& mps = store_.mountpaths();
  size_t mp = 0;
  while (mp + 1 < mps.size() && !mps.enabled(mp)) ++mp;
  return EtlSink(store_, job.bucket, item.name, mps.WorkDir(mp), std::move(*etl), job.req.etl_args,
                 ThroughFor(job, item.name));
}

WriteThroughFn Downloader::ThroughFor(const Job& job, const std::string& name) {
  return IsRemoteKey(job.bucket) ? remote_.UploadThrough(job.bucket, name) : WriteThroughFn();
}

Result<std::shared_ptr<etl::RunningEtl>> Downloader::FindEtl(const std::string& name) const {
  if (opts_.etl == nullptr) return ais::Status::NotSupported("download through an ETL: no ETLs on this server");
  auto etl = opts_.etl->Find(name);
  if (!etl.ok()) return etl.status();
  if ((*etl)->spec.comm == etl::CommType::kHpull) {
    return ais::Status::NotSupported("download through ETL " + name +
                                     ": hpull:// is not supported (as in AIS), only hpush:// and ws://");
  }
  return etl;
}

ais::Status Downloader::FetchRemote(Job& job, Task& task, bool* skipped) {
  const std::string& name = task.item.name;
  bool replace = false;
  if (auto local = store_.Head(job.bucket, name); local.ok()) {
    auto same = remote_.InSync(job.bucket, *local);
    if (!same.ok()) return same.status();
    if (*same) {
      *skipped = true;
      task.total.store(static_cast<int64_t>(local->size));
      task.downloaded.store(static_cast<int64_t>(local->size));
      return ais::Status::OK();
    }
    replace = true;
  }
  auto got = remote_.ColdGet(job.bucket, name, replace);
  if (!got.ok()) return got.status();
  task.total.store(static_cast<int64_t>(got->size));
  task.downloaded.store(static_cast<int64_t>(got->size));
  return ais::Status::OK();
}

void Downloader::SyncDeleted(JobControl& jc, Job& job, const std::function<bool(const std::string&)>& listed) {
  std::vector<std::string> gone;
  ObjectWalk walk{.prefix = job.req.prefix, .after = "", .headers = false, .stop = [&jc] { return jc.aborted(); }};
  ais::Status st = store_.ForEachObject(job.bucket, walk, [&](const WalkedObject& obj) {
    const std::string& n = obj.name();
    if (n.ends_with(job.req.suffix) && !listed(n)) gone.push_back(n);
    return ais::Status::OK();
  });
  if (!st.ok()) {
    std::lock_guard lock(job.mu);
    job.errors.push_back({{"name", job.req.prefix}, {"error", "synchronize: " + st.message()}});
    job.error_cnt.fetch_add(1);
    return;
  }
  for (const std::string& n : gone) {
    job.scheduled_cnt.fetch_add(1);
    auto t = std::make_shared<Task>();
    t->item = {n, ""};
    t->start_ns = NowNs();
    ais::Status del = store_.Delete(job.bucket, n);
    if (del.ok() || del.IsNotFound()) {
      job.Finished(t, false);
    } else {
      job.Failed(t, del.message());
    }
  }
}

std::shared_ptr<Downloader::Job> Downloader::Find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = byid_.find(id);
  return it == byid_.end() ? nullptr : it->second;
}

namespace {
ais::Status NoSuchJob(const std::string& id) {
  return ais::Status::NotFound("download job " + id.substr(0, 64) + " does not exist");
}
}  // namespace

Result<nlohmann::json> Downloader::Status(const std::string& id, bool only_active) const {
  auto job = Find(id);
  if (!job) return NoSuchJob(id);
  nlohmann::json j = job->JobJson();
  std::lock_guard lock(job->mu);
  if (!job->current.empty()) {
    nlohmann::json cur = nlohmann::json::array();
    for (const auto& [p, t] : job->current) cur.push_back(Job::TaskJson(*t, 0));
    std::sort(cur.begin(), cur.end(), [](const auto& a, const auto& b) { return a["name"] < b["name"]; });
    j["current_tasks"] = std::move(cur);
  }
  if (!only_active) {
    if (!job->finished.empty()) j["finished_tasks"] = job->finished;
    if (!job->errors.empty()) j["download_errors"] = job->errors;
  }
  return j;
}

nlohmann::json Downloader::List(const std::string& regex, bool only_active) const {
  std::optional<std::regex> re;
  if (!regex.empty()) re.emplace(regex, std::regex::extended);
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, job] : byid_) {
      if (only_active && !job->running()) continue;
      if (re && !std::regex_search(job->description, *re)) continue;
      jobs.push_back(job);
    }
  }
  // As AIS sorts JobInfos: running first, by start; then finished, by finish time.
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
    const int64_t fa = a->finish_ns.load(), fb = b->finish_ns.load();
    if ((fa == 0) != (fb == 0)) return fa == 0;
    return fa == 0 ? a->start_ns < b->start_ns : fa < fb;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& job : jobs) out.push_back(job->JobJson());
  return out;
}

ais::Status Downloader::Abort(const std::string& id) {
  auto job = Find(id);
  if (!job) return NoSuchJob(id);
  if (job->running()) jobs_.Abort(job->xid);
  return ais::Status::OK();
}

ais::Status Downloader::Remove(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = byid_.find(id);
  if (it == byid_.end()) return NoSuchJob(id);
  if (it->second->running()) return ais::Status::InvalidArgument("job \"" + id + "\" is still running");
  byid_.erase(it);
  return ais::Status::OK();
}

Result<std::string> Downloader::BucketOf(const std::string& id) const {
  auto job = Find(id);
  if (!job) return NoSuchJob(id);
  return job->bucket;
}

}  // namespace ais
