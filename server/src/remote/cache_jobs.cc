#include "remote/cache_jobs.h"

#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "store/bck.h"
#include "util/bounded_queue.h"

namespace ais {
namespace {

constexpr size_t kQueueMax = 1024;
constexpr int64_t kAutoWorkers = 4;
constexpr int64_t kMaxWorkers = 32;

using Push = std::function<bool(const std::string& name, uint64_t size)>;

// Runs `fn` on every name `enumerate` pushes (with its listed size, 0: unknown), on `num_workers`
// threads (0: auto, -1: one). The first error stops everything, unless `continue_on_err`: then
// it is recorded in the job and the rest goes on.
Status RunConcurrently(JobControl& jc, int64_t num_workers, bool continue_on_err,
                       const std::function<Status(const std::string&, uint64_t)>& fn,
                       const std::function<Status(const Push&)>& enumerate) {
  BoundedQueue<std::pair<std::string, uint64_t>> queue(kQueueMax);  // names, listed sizes (0: unknown)
  std::mutex mu;
  Status first_error;  // guarded by mu
  // The first failure stops everyone (an OK status: stop without an error, an abort).
  auto fail = [&](Status st) {
    {
      std::lock_guard lock(mu);
      if (first_error.ok()) first_error = std::move(st);
    }
    queue.Stop();
  };
  int64_t n = num_workers < 0 ? 1 : num_workers == 0 ? kAutoWorkers : std::min(num_workers, kMaxWorkers);
  std::vector<std::thread> workers;
  for (int64_t i = 0; i < n; ++i) {
    workers.emplace_back([&] {
      while (auto item = queue.Pop()) {
        if (jc.aborted()) {
          fail(Status::OK());  // wakes an enumerator waiting for room
          break;
        }
        Status st = fn(item->first, item->second);
        if (st.ok()) continue;
        if (continue_on_err) {
          jc.AddError(st.message());
          continue;
        }
        fail(st);
      }
    });
  }
  Push push = [&](const std::string& name, uint64_t size) { return !jc.aborted() && queue.Push({name, size}); };
  if (Status enumerated = enumerate(push); !enumerated.ok()) fail(enumerated);
  queue.Close();
  for (auto& w : workers) w.join();
  std::lock_guard lock(mu);
  return first_error;
}

// Pushes every object of the remote bucket under `prefix`, page by page, with its size.
Status ForEachRemote(CacheTier& tier, const std::string& key, const std::string& prefix, const Push& push) {
  std::string token;
  do {
    auto page = tier.List(key, prefix, token, kMaxRemotePage, false);
    if (!page.ok()) return page.status();
    for (const auto& e : page->entries) {
      if (e.is_dir || e.name.ends_with('/')) continue;
      if (!push(e.name, e.size)) return Status::OK();
    }
    token = page->next_token;
  } while (!token.empty());
  return Status::OK();
}

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
      if (args.count) jc.Add(1, static_cast<int64_t>(got->size));
      return Status::OK();
    }
    if (got.status().IsNotFound() && !list) return Status::OK();  // a range names objects that need not exist
    return got.status();
  };

  return RunConcurrently(jc, args.num_workers, args.continue_on_err, fetch_one, [&](const Push& push) -> Status {
    switch (args.sel.kind()) {
      case ObjectSelection::Kind::kList:
        for (const auto& name : args.sel.names()) {
          if (!push(name, 0)) break;
        }
        return Status::OK();
      case ObjectSelection::Kind::kRange:
        args.sel.tmpl().Expand([&](const std::string& name) { return push(name, 0); });
        return Status::OK();
      case ObjectSelection::Kind::kPrefix:
        return ForEachRemote(tier, args.key, args.sel.tmpl().prefix, push);
    }
    return Status::OK();
  });
}

Status RunCopyRemoteBucket(CacheTier& tier, Store& store, JobControl& jc, const CopyRemoteArgs& args) {
  const bool onto_itself = args.dst == args.src;
  std::mutex mu;
  std::set<std::string> copied;  // destination names, for `sync`; guarded by mu
  auto copy_one = [&](const std::string& name, uint64_t) -> Status {
    bool replace = false;
    auto local = store.Head(args.src, name);
    if (local.ok() && (args.latest || args.sync)) {
      auto same = tier.InSync(args.src, *local);
      if (!same.ok() && same.status().IsNotFound()) {
        // Gone remotely: not copied; with sync the cached copy goes too (and the destination's
        // below), else it is an error to report.
        if (!args.sync) return same.status();
        Status st = store.Delete(args.src, name);
        return st.IsNotFound() ? Status::OK() : st;
      }
      if (!same.ok()) return same.status();
      replace = !*same;
    } else if (!local.ok() && !local.status().IsNotFound()) {
      return local.status();
    }
    uint64_t size = local.ok() ? local->size : 0;
    if ((!local.ok() || replace) && !args.dry_run) {
      auto got = tier.ColdGet(args.src, name, replace);
      if (!got.ok()) return got.status().IsNotFound() ? Status::OK() : got.status();  // deleted meanwhile
      size = got->size;
    }
    const std::string to = args.naming.Apply(name);
    if (!args.dry_run && !onto_itself) {
      Status st = store.Copy(args.src, name, args.dst, to, args.through ? args.through(to) : WriteThroughFn());
      if (st.IsNotFound() && store.GetBucket(args.dst).ok()) return Status::OK();  // evicted meanwhile
      AIS_RETURN_IF_ERROR(st);
    }
    if (args.sync) {
      std::lock_guard lock(mu);
      copied.insert(to);
    }
    jc.Add(1, static_cast<int64_t>(size));
    return Status::OK();
  };
  Status st = RunConcurrently(jc, args.num_workers, args.continue_on_err, copy_one, [&](const Push& push) -> Status {
    if (args.all) return ForEachRemote(tier, args.src, args.prefix, push);
    bool pushed_all = true;  // false once push refuses (the job stops)
    ObjectWalk cached{.prefix = args.prefix, .after = {}, .headers = true, .stop = [&] { return !pushed_all; }};
    return store.ForEachObject(args.src, cached, [&](const WalkedObject& obj) {
      pushed_all = push(obj.name(), obj.meta().size);
      return Status::OK();
    });
  });
  if (!st.ok() || !args.sync || args.dry_run || jc.aborted()) return st;
  // sync: the destination's objects whose source the remote no longer has go too. A full
  // listing (`all`) names every source; otherwise the remote is asked about the rest.
  const std::string& bucket = onto_itself ? args.src : args.dst;
  ObjectWalk walk{.prefix = args.prefix, .after = {}, .headers = true, .stop = [&jc] { return jc.aborted(); }};
  return store.ForEachObject(bucket, walk, [&](const WalkedObject& obj) -> Status {
    const std::string& name = obj.name();
    if (copied.count(name)) return Status::OK();
    if (!args.all) {
      if (!args.naming.ext.empty()) return Status::OK();  // renamed: which source it came from is unknown
      auto head = tier.Head(args.src, name);
      if (head.ok()) return Status::OK();
      if (!head.status().IsNotFound()) return head.status();
    }
    Status d = store.Delete(bucket, name);
    return d.ok() || d.IsNotFound() ? Status::OK() : d;
  });
}

Status RunDeleteRemote(CacheTier& tier, Store& store, JobControl& jc, const DeleteRemoteArgs& args) {
  using Kind = ObjectSelection::Kind;
  const Kind kind = args.sel.kind();
  // Backend first: a failed DeleteRemote returns before the cached copy is touched.
  auto delete_one = [&](const std::string& name) -> Status {
    // (A backend that has no such object, as GCS says with a 404: the cached copy still goes.)
    if (Status r = tier.DeleteRemote(args.key, name); !r.ok() && r.code() != Status::Code::kNotFound) return r;
    Status st = store.Delete(args.key, name);
    if (!st.ok() && !st.IsNotFound()) return st;
    jc.Add(1, 0);
    return Status::OK();
  };
  auto delete_named = [&](const std::string& name, uint64_t) -> Status {
    if (kind == Kind::kPrefix) return delete_one(name);  // listed by the backend: it exists
    auto remote = tier.Head(args.key, name);
    if (!remote.ok() && !remote.status().IsNotFound()) return remote.status();
    if (!remote.ok() && !store.Head(args.key, name).ok()) {
      // Neither the backend nor the cache has it: an error for a listed name (recorded, not
      // stopping the job, as on ais://), nothing for a range.
      if (kind == Kind::kList) jc.AddError(ObjectCname(args.key, name) + " does not exist");
      return Status::OK();
    }
    return delete_one(name);
  };
  Status st = RunConcurrently(jc, args.num_workers, args.continue_on_err, delete_named, [&](const Push& push) -> Status {
    switch (kind) {
      case Kind::kList:
        for (const auto& name : args.sel.names()) {
          if (!push(name, 0)) break;
        }
        return Status::OK();
      case Kind::kRange:
        args.sel.tmpl().Expand([&](const std::string& name) { return push(name, 0); });
        return Status::OK();
      case Kind::kPrefix:
        return ForEachRemote(tier, args.key, args.sel.tmpl().prefix, push);
    }
    return Status::OK();
  });
  if (!st.ok() || kind != Kind::kPrefix || jc.aborted()) return st;
  // Every listed object's cached copy is gone by now, so what the cache still holds under the
  // prefix the backend did not list (deleted out of band): deleted through as well, so that
  // nothing under the prefix survives in either place.
  return args.sel.ForEach(store, args.key, [&jc] { return jc.aborted(); }, [&](const std::string& name) {
    Status d = delete_one(name);
    if (d.ok() || !args.continue_on_err) return d;
    jc.AddError(d.message());
    return Status::OK();
  });
}

Status RunEvict(Store& store, JobControl& jc, const std::string& key, const ObjectSelection& sel) {
  return sel.ForEach(store, key, [&jc] { return jc.aborted(); }, [&](const std::string& name) {
    Status st = store.Delete(key, name);
    if (st.ok()) jc.Add(1, 0);
    return st.IsNotFound() ? Status::OK() : st;
  });
}

}  // namespace ais
