#include "etl/offline.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "etl/transform.h"
#include "store/bck.h"
#include "util/bounded_queue.h"
#include "util/file_segment.h"

namespace ais::etl {

namespace {

constexpr size_t kAutoWorkers = 4;
constexpr size_t kMaxWorkers = 64;
constexpr size_t kQueuePerWorker = 16;

// The transform of one object into a writer; the bytes written, or 0 when the transformer
// delivered them itself (204).
Result<uint64_t> TransformInto(Store& store, const EtlChain& chain, const std::string& etl_args, const std::string& src,
                               const std::string& name, const std::string& dst, const std::string& to,
                               const WriteThroughFn& through) {
  auto obj = store.OpenShared(src, name);
  if (!obj.ok()) return obj.status();
  auto w = store.BeginPut(dst, to, PutOptions{});
  if (!w.ok()) return w.status();
  SegmentReader reader((*obj)->Segments(0, (*obj)->size()));
  TransformSource ts{.provider = std::string(KeyProvider(src)),
                     .bucket = std::string(KeyName(src)),
                     .ns = KeyNs(src).Uname(),
                     .object = name,
                     .size = (*obj)->size(),
                     .read = [&reader](char* buf, size_t len) { return reader.Read(buf, len); }};
  auto status = Transform(
      *chain.first, ts, etl_args, chain.next_urls, [](int, std::optional<uint64_t>) { return Status::OK(); },
      [&w](const char* d, size_t n) { return (*w)->Write(d, n); });
  if (!status.ok()) return status.status();
  if (*status == 204) return uint64_t{0};  // delivered by direct put: nothing to write here
  const uint64_t written = (*w)->written();
  ObjectMeta meta;
  AIS_RETURN_IF_ERROR(CommitThrough(**w, &meta, through));
  return written;
}

int HttpCodeOf(const Status& st) {
  switch (st.code()) {
    case Status::Code::kNotFound:
    case Status::Code::kBucketNotFound: return 404;
    case Status::Code::kInvalidArgument: return 400;
    case Status::Code::kTooManyRequests: return 429;
    case Status::Code::kUnavailable: return 503;
    default: return 500;
  }
}

}  // namespace

Result<EtlChain> ResolveChain(const EtlManager& m, const std::string& name, const std::vector<std::string>& pipeline) {
  EtlChain c;
  c.name = name;
  auto first = m.Find(name);
  if (!first.ok()) return first.status();
  c.first = std::move(*first);
  for (const auto& n : pipeline) {
    auto next = m.Find(n);
    if (!next.ok()) return next.status();
    c.next_urls.push_back((*next)->client.base_url());
  }
  if (!c.next_urls.empty() && c.first->spec.comm == CommType::kHpull) {
    return Status::InvalidArgument("ETL pipeline not supported for hpull://");
  }
  return c;
}

Result<uint64_t> TransformObject(Store& store, EtlManager& m, const EtlChain& chain, const std::string& etl_args,
                                 const std::string& src, const std::string& name, const std::string& dst,
                                 const std::string& to, const WriteThroughFn& through) {
  auto got = TransformInto(store, chain, etl_args, src, name, dst, to, through);
  if (!got.ok()) {
    const std::string msg = got.status().IsNotFound() && !got.status().message().starts_with("ETL error")
                                ? "object not found"
                                : got.status().message();
    m.RecordError(chain.name, "", {ObjectCname(src, name), msg, HttpCodeOf(got.status())});
    return got.status();
  }
  m.CountInline(chain.name, *got, *got == 0);
  return got;
}

Status RunOfflineTransform(Store& store, JobControl& jc, EtlManager& m, const OfflineArgs& args) {
  const size_t workers = args.num_workers < 0    ? 1
                         : args.num_workers == 0 ? kAutoWorkers
                                                 : std::min<size_t>(static_cast<size_t>(args.num_workers), kMaxWorkers);
  BoundedQueue<std::string> queue(workers * kQueuePerWorker);  // names from the walk to the workers
  std::mutex mu;
  Status failure;  // the first error that ends the job (guarded by mu)
  auto one = [&](const std::string& name) {
    if (args.dry_run) {
      if (auto meta = store.Head(args.src, name); meta.ok()) jc.Add(1, static_cast<int64_t>(meta->size));
      return;
    }
    const std::string to = args.naming.Apply(name);
    auto got = TransformInto(store, args.chain, "", args.src, name, args.dst, to,
                             args.through ? args.through(to) : WriteThroughFn());
    if (got.ok()) {
      jc.Add(1, static_cast<int64_t>(*got));
      return;
    }
    const Status& st = got.status();
    const bool missing = st.IsNotFound() && !st.message().starts_with("ETL error");
    if (missing && !args.sel) return;  // deleted since the walk saw it
    if (missing && args.sel->kind() != ObjectSelection::Kind::kList) return;  // a range names what need not exist
    m.RecordError(args.chain.name, args.job_id, {ObjectCname(args.src, name), missing ? "object not found" : st.message(),
                                                 HttpCodeOf(st)});
    jc.AddError(ObjectCname(args.src, name) + ": " + st.message());
    if (missing || args.continue_on_err) return;
    std::lock_guard lock(mu);
    if (failure.ok()) failure = st;
    queue.Stop();
  };
  std::vector<std::thread> pool;
  for (size_t i = 0; i < workers; ++i) {
    pool.emplace_back([&] {
      while (auto name = queue.Pop()) {
        if (jc.aborted()) break;
        one(*name);
      }
    });
  }
  auto stop = [&] {
    if (jc.aborted()) return true;
    std::lock_guard lock(mu);
    return !failure.ok();
  };
  auto push = [&](const std::string& name) {
    (void)queue.Push(name);  // refused once stopped: `stop` then ends the walk
    return Status::OK();
  };
  Status walked;
  if (args.sel) {
    walked = args.sel->ForEach(store, args.src, stop, push);
  } else {
    ObjectWalk walk{.prefix = args.prefix, .after = {}, .headers = false, .stop = stop};
    walked = store.ForEachObject(args.src, walk, [&](const WalkedObject& obj) { return push(obj.name()); });
  }
  queue.Close();
  if (jc.aborted()) queue.Stop();
  for (auto& t : pool) t.join();
  std::lock_guard lock(mu);
  if (!failure.ok()) return failure;
  return walked;
}

}  // namespace ais::etl
