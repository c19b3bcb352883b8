#include "handlers/bucket_actions.h"
#include "handlers/handlers.h"

#include <deque>
#include <map>
#include <mutex>

#include "api/headers.h"
#include "api/moss_request.h"  // NormalizeProvider
#include "etl/offline.h"
#include "service/access.h"
#include "service/offload.h"
#include "service/remote.h"
#include "jobs/bucket_jobs.h"
#include "jobs/object_selection.h"
#include "remote/cache_jobs.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kHdrBucketSumm = "Ais-Bucket-Summ";
constexpr const char* kHdrXactionId = "Ais-Xaction-Id";
constexpr size_t kKeepSummaries = 256;

std::string Cname(const std::string& bucket) { return BucketCname(bucket); }

// "ais/@#/<name>/" (a bucket uname, as `bck_to` carries it; "ais/@#ns/<name>/" in a namespace) ->
// its store key (bck.h); "aws/@#/<name>/" too, for a remote bucket copied onto itself (a refresh
// of its cache).
Result<std::string> ParseBucketUname(const std::string& uname) {
  auto bad = Status::InvalidArgument("invalid destination bucket \"" + uname + "\" (expecting ais/@#/BUCKET/)");
  std::vector<std::string_view> parts = Split(uname, '/');
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  if (parts.size() != 3) return bad;
  if (parts[0] == "ais" && parts[1] != "@#" && !parts[1].empty()) {
    auto ns = ParseNamespace(parts[1]);
    if (!ns.ok()) return ns.status();
    if (ns->remote()) {
      return Status::NotSupported("destination \"" + uname + "\": buckets of remote AIS clusters are not supported here");
    }
    std::string name(parts[2]);
    AIS_RETURN_IF_ERROR(ValidateBucketName(name));
    return BucketKey(kProviderAis, *ns, name);
  }
  if (auto provider = NormalizeProvider(parts[0]);
      provider.ok() && IsServedCloud(*provider) && (parts[1] == "@#" || parts[1].empty())) {
    std::string name(parts[2]);
    AIS_RETURN_IF_ERROR(ValidateBucketName(name));
    return BucketKey(*provider, name);
  }
  if (parts[0] != "ais") {
    return Status::NotSupported("destination \"" + uname + "\": only ais:// buckets are served by this server");
  }
  if (parts[1] != "@#" && !parts[1].empty()) {
    return Status::NotSupported("destination \"" + uname + "\": bucket namespaces are not supported by this server");
  }
  std::string name(parts[2]);
  AIS_RETURN_IF_ERROR(ValidateBucketName(name));
  return name;
}

// A copy's naming rules: prepend, then extension renames ("from" -> "to", dots dropped).
CopyNaming Naming(const CopyMsg& m) {
  CopyNaming n;
  n.prepend = m.prepend;
  for (auto [from, to] : m.ext) {
    if (from.starts_with('.')) from.erase(0, 1);
    if (to.starts_with('.')) to.erase(0, 1);
    n.ext[from] = to;
  }
  return n;
}

// The destination of a copy or archive: "tobck", or the source bucket when not given.
Result<std::string> Destination(const BucketRef& to, const std::string& src) {
  auto key = to.Key("destination");
  if (!key.ok()) return key.status();
  return key->empty() ? src : *key;
}

// A copy into a remote bucket `dst` (AIS writes each copied object through, as a PUT): the bucket
// is added on first use, and the result makes each object's upload, run before its local commit
// on the job's thread. An empty function for an ais:// destination.
Task<Result<ThroughFor>> RemoteDestination(ServerContext& ctx, const std::string& dst) {
  if (!IsRemoteKey(dst)) co_return ThroughFor();
  if (!ctx.store.buckets().Get(dst)) {
    if (Status st = ctx.remote.CheckEnabled(KeyProvider(dst)); !st.ok()) co_return st;
    std::function<Status()> add = [&tier = ctx.remote, dst] { return tier.AddBucket(dst); };
    if (Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(add)); !st.ok()) co_return st;
  }
  co_return ThroughFor([&tier = ctx.remote, dst](const std::string& name) { return tier.UploadThrough(dst, name); });
}

// The destination of a copy or transform job: a remote one is added on first use and written
// through (the function returned); an ais:// one is created with the source's props when it is
// missing. A dry run writes nothing, so needs nothing.
Task<Result<ThroughFor>> PrepareDestination(ServerContext& ctx, const std::string& dst, const BucketProps& src_props,
                                            bool dry_run) {
  if (dry_run) co_return ThroughFor();
  if (IsRemoteKey(dst)) co_return co_await RemoteDestination(ctx, dst);
  if (!ctx.store.GetBucket(dst).ok()) {
    Status st = ctx.store.CreateBucket(dst, src_props.ToAisJson(dst, ctx.store.capacity().config()));
    if (!st.ok() && st.code() != Status::Code::kAlreadyExists) co_return st;
  }
  co_return ThroughFor();
}

JobOptions Opts(std::string dst_bucket, std::string ctlmsg, std::string id = "") {
  JobOptions o;
  o.id = std::move(id);
  o.dst_bucket = std::move(dst_bucket);
  o.ctlmsg = std::move(ctlmsg);
  return o;
}

Task<Handled> ReplyJob(Exchange& ex, const std::string& id) {
  co_return co_await ex.Reply(http::status::ok, {}, id, "text/plain");
}

// Finished summaries by job ID (bounded; the oldest go first).
class SummaryResults {
 public:
  void Put(const std::string& id, std::vector<std::pair<std::string, BucketSummary>> r) {
    std::lock_guard lock(mu_);
    results_[id] = std::move(r);
    order_.push_back(id);
    while (order_.size() > kKeepSummaries) {
      results_.erase(order_.front());
      order_.pop_front();
    }
  }
  std::optional<std::vector<std::pair<std::string, BucketSummary>>> Get(const std::string& id) const {
    std::lock_guard lock(mu_);
    auto it = results_.find(id);
    if (it == results_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::pair<std::string, BucketSummary>>> results_;  // guarded by mu_
  std::deque<std::string> order_;                                                     // guarded by mu_
};

SummaryResults& Summaries() {
  static SummaryResults s;
  return s;
}

uint64_t DivRound(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b / 2) / b; }

// cmn.BsummResult: the bucket (cmn.Bck: by name and provider, not by store key), then
// apc.BsummResult (counts as strings where Go says ",string").
nlohmann::json SummaryJson(const std::string& bucket, const BucketSummary& s) {
  auto str = [](uint64_t v) { return std::to_string(v); };
  const BucketNs ns = KeyNs(bucket);
  return {{"name", KeyName(bucket)},
          {"provider", KeyProvider(bucket)},
          {"namespace", {{"uuid", ns.uuid}, {"name", ns.name}}},
          {"ObjCount", {{"obj_count_present", str(s.obj_count)}, {"obj_count_remote", "0"}}},
          {"ObjSize",
           {{"obj_min_size", s.min_size},
            {"obj_avg_size", DivRound(s.size_present, s.obj_count)},
            {"obj_max_size", s.max_size}}},
          {"TotalSize",
           {{"size_on_disk", str(s.size_on_disk)},
            {"size_all_present_objs", str(s.size_present)},
            {"size_all_remote_objs", "0"},
            {"total_disks_size", str(s.disks_size)}}},
          {"used_pct", DivRound(s.size_on_disk * 100, s.disks_size)},
          {"is_present", true}};
}

// Starts a summary job of `buckets` (names) under `prefix`; its result lands in Summaries().
std::string StartSummary(ServerContext& ctx, std::vector<std::string> buckets, const std::string& prefix,
                         const std::string& scope) {
  Store& store = ctx.store;
  std::string id = RandomId(12);
  std::string ctlmsg = (scope.empty() ? std::string("ais://") : Cname(scope)) + ", prefix:" + prefix;
  ctx.jobs.Start(
      "summary-bck", scope,
      [&store, buckets = std::move(buckets), prefix, id](JobControl& jc) -> Status {
        std::vector<std::pair<std::string, BucketSummary>> out;
        for (const auto& b : buckets) {
          auto s = SummarizeBucket(store, jc, b, prefix);
          if (!s.ok()) {
            if (s.status().IsNotFound() && buckets.size() > 1) continue;  // destroyed meanwhile
            return s.status();
          }
          out.emplace_back(b, *s);
        }
        if (!jc.aborted()) Summaries().Put(id, std::move(out));
        return Status::OK();
      },
      Opts("", ctlmsg, id));
  return id;
}

enum class SummaryState { kUnknown, kRunning, kDone, kFailed };

SummaryState SummaryStatus(ServerContext& ctx, const std::string& id, Status* err) {
  auto job = ctx.jobs.Get(id);
  if (!job || job->kind != "summary-bck") return SummaryState::kUnknown;
  if (job->running()) return SummaryState::kRunning;
  if (!job->err.empty() || job->aborted) {
    std::string why = job->aborted ? "summary-bck[" + id + "] aborted" : job->err;
    *err = why.find("does not exist") != std::string::npos ? Status::NotFound(why) : Status::IOError(why);
    return SummaryState::kFailed;
  }
  return SummaryState::kDone;
}

// copy-bck from a remote bucket: the cached objects, or every object the remote lists when
// query `presence` asks for more than what is present (AIS `ais cp --all`); see RunCopyRemoteBucket.
Task<Handled> StartCopyRemoteBucket(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& dst,
                                    const BucketProps& props, const CopyMsg& copy) {
  CopyRemoteArgs args{.src = bucket, .dst = dst, .prefix = copy.prefix, .naming = Naming(copy), .latest = copy.latest,
                      .sync = copy.sync, .dry_run = copy.dry_run, .continue_on_err = copy.continue_on_err,
                      .num_workers = copy.num_workers};
  if (Status st = ValidatePrefix(args.prefix); !st.ok()) co_return st;
  if (auto flt = ex.query("presence"); flt && !flt->empty()) {
    auto v = ParseUint(*flt);
    if (!v || *v > 5) co_return Status::InvalidArgument("parse 'flt-presence': invalid value \"" + *flt + "\"");
    args.all = *v < 2 || *v > 4;  // not one of the "present" filters
  }
  if (!args.dry_run && !IsRemoteKey(dst) && !ctx.store.GetBucket(dst).ok()) {
    Status st = ctx.store.CreateBucket(dst, props.ToAisJson(dst, ctx.store.capacity().config()));
    if (!st.ok() && st.code() != Status::Code::kAlreadyExists) co_return st;
  }
  if (!args.dry_run && dst != bucket) {  // (onto itself: a refresh of the cache, nothing to write through)
    auto through = co_await RemoteDestination(ctx, dst);
    if (!through.ok()) co_return through.status();
    args.through = std::move(*through);
  }
  std::string ctlmsg = Cname(bucket) + " => " + Cname(dst) + (args.prefix.empty() ? "" : ", prefix:" + args.prefix) +
                       (args.all ? ", all" : ", cached") + (args.latest ? ", latest" : "") +
                       (args.sync ? ", sync" : "") + (args.dry_run ? ", dry-run" : "");
  CacheTier& tier = ctx.remote;
  Store& store = ctx.store;
  std::string id = ctx.jobs.Start(
      "copy-bck", bucket, [&tier, &store, args](JobControl& jc) { return RunCopyRemoteBucket(tier, store, jc, args); },
      Opts(dst, ctlmsg));
  co_return co_await ReplyJob(ex, id);
}

// A multi-object copy or archive of a remote bucket reads the cached objects: the selection is
// prefetched first (what is cached already, and unchanged with `latest`, is not fetched again).
std::optional<PrefetchArgs> FetchFirst(const std::string& bucket, const MultiObjMsg& m, bool latest) {
  if (!IsRemoteKey(bucket)) return std::nullopt;
  auto sel = ObjectSelection::From(m.tmpl, m.objnames);
  if (!sel.ok()) return std::nullopt;  // (the caller refused it already)
  return PrefetchArgs{.key = bucket, .sel = *sel, .latest = latest, .continue_on_err = m.continue_on_err,
                      .num_workers = m.num_workers, .blob_threshold = 0, .blob = {}, .count = false};
}

}  // namespace

Task<Handled> StartCopyOrMoveBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  auto to = ParseBucketUname(ex.query("bck_to").value_or(""));
  if (!to.ok()) co_return to.status();
  const std::string dst = *to;
  if (Status st = AuthorizeDestination(ctx, ex, dst); !st.ok()) co_return st;
  bool move = msg.action == "move-bck";
  if (IsRemoteKey(dst) && move) {
    co_return Status::NotSupported("destination " + Cname(dst) + ": moving into a remote bucket is not supported");
  }
  if (dst == bucket && !IsRemoteKey(bucket)) {
    co_return 
        Status::InvalidArgument("cannot " + msg.action + " bucket \"" + Cname(bucket) + "\" onto itself");
  }
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  Store& store = ctx.store;
  if (move) {
    if (Status st = msg.CheckNoValue(); !st.ok()) co_return st;
    if (ctx.store.GetBucket(dst).ok()) {
      co_return Status::InvalidArgument("bucket \"" + Cname(dst) + "\" already exists");
    }
    Status st = ctx.store.CreateBucket(dst, props->ToAisJson(dst, ctx.store.capacity().config()));
    if (!st.ok()) co_return st;
    std::string id = ctx.jobs.Start(
        "move-bck", bucket, [&store, bucket, dst](JobControl& jc) { return RunMoveBucket(store, jc, bucket, dst); },
        Opts(dst, Cname(bucket) + " => " + Cname(dst)));
    co_return co_await ReplyJob(ex, id);
  }
  auto copy = CopyMsg::Decode(msg.value);
  if (!copy.ok()) co_return copy.status();
  if (!copy->etl_name.empty() || !copy->pipeline.empty()) {
    co_return Status::InvalidArgument("copy-bck: an ETL (value.id, value.pipeline) is for etl-bck");
  }
  if (copy->sync && !copy->prepend.empty()) {
    co_return Status::InvalidArgument("prepend option (\"" + copy->prepend +
                                      "\") is incompatible with the request to synchronize buckets");
  }
  if (IsRemoteKey(bucket)) co_return co_await StartCopyRemoteBucket(ctx, ex, bucket, dst, *props, *copy);
  CopyBucketArgs args;
  args.src = bucket;
  args.dst = dst;
  args.prefix = copy->prefix;
  args.naming = Naming(*copy);
  args.dry_run = copy->dry_run;
  if (Status st = ValidatePrefix(args.prefix); !st.ok()) co_return st;
  auto through = co_await PrepareDestination(ctx, dst, *props, args.dry_run);
  if (!through.ok()) co_return through.status();
  args.through = std::move(*through);
  std::string ctlmsg = Cname(bucket) + " => " + Cname(dst) + (args.prefix.empty() ? "" : ", prefix:" + args.prefix) +
                       (args.dry_run ? ", dry-run" : "");
  std::string id = ctx.jobs.Start(
      "copy-bck", bucket, [&store, args](JobControl& jc) { return RunCopyBucket(store, jc, args); },
      Opts(dst, ctlmsg));
  co_return co_await ReplyJob(ex, id);
}

Task<Handled> StartTransformBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  auto to = ParseBucketUname(ex.query("bck_to").value_or(""));
  if (!to.ok()) co_return to.status();
  const std::string dst = *to;
  if (Status st = AuthorizeDestination(ctx, ex, dst); !st.ok()) co_return st;
  auto tcb = CopyMsg::Decode(call.msg.value);
  if (!tcb.ok()) co_return tcb.status();
  if (Status st = ValidatePrefix(tcb->prefix); !st.ok()) co_return st;
  if (tcb->sync && !tcb->prepend.empty()) {
    co_return Status::InvalidArgument("prepend option (\"" + tcb->prepend +
                                      "\") is incompatible with the request to synchronize buckets");
  }
  if (tcb->latest || tcb->sync) {
    co_return Status::NotSupported("etl-bck: latest-ver and synchronize are not supported yet");
  }
  if (dst == bucket && !tcb->dry_run) {
    co_return Status::InvalidArgument("cannot etl-bck bucket \"" + Cname(bucket) + "\" onto itself");
  }
  if (tcb->etl_name.empty()) co_return Status::InvalidArgument("etl-bck: no ETL named (value.id)");
  auto chain = etl::ResolveChain(*ctx.etl, tcb->etl_name, tcb->pipeline);
  if (!chain.ok()) co_return chain.status();
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  etl::OfflineArgs args{.job_id = RandomId(10), .chain = std::move(*chain), .src = bucket, .dst = dst,
                        .prefix = tcb->prefix, .sel = std::nullopt, .naming = Naming(*tcb), .dry_run = tcb->dry_run,
                        .continue_on_err = tcb->continue_on_err, .num_workers = tcb->num_workers};
  auto through = co_await PrepareDestination(ctx, dst, *props, args.dry_run);
  if (!through.ok()) co_return through.status();
  args.through = std::move(*through);
  JobOptions opts = Opts(dst, Cname(bucket) + " => " + Cname(dst) + ", etl:" + tcb->etl_name +
                                  (args.prefix.empty() ? "" : ", prefix:" + args.prefix) +
                                  (args.dry_run ? ", dry-run" : ""));
  opts.id = args.job_id;
  std::string id = ctx.jobs.Start(
      "etl-bck", bucket,
      [&store = ctx.store, &m = *ctx.etl, args](JobControl& jc) { return etl::RunOfflineTransform(store, jc, m, args); },
      std::move(opts));
  co_return co_await ReplyJob(ex, id);
}

Task<Handled> StartListRange(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  auto m = MultiObjMsg::Decode(msg.action, msg.value);
  if (!m.ok()) co_return m.status();
  auto sel = ObjectSelection::From(m->tmpl, m->objnames);
  if (!sel.ok()) co_return sel.status();
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  Store& store = ctx.store;
  const std::string kind = msg.action;
  std::string ctlmsg = Cname(bucket) + ", " + sel->Describe();
  if (kind == "evict-listrange" && IsRemoteKey(bucket)) {
    std::string id = ctx.jobs.Start(
        kind, bucket, [&store, bucket, s = *sel](JobControl& jc) { return RunEvict(store, jc, bucket, s); },
        Opts("", ctlmsg));
    co_return co_await ReplyJob(ex, id);
  }
  if (kind == "delete-listrange" && IsRemoteKey(bucket)) {
    DeleteRemoteArgs args{.key = bucket, .sel = *sel, .continue_on_err = m->continue_on_err,
                          .num_workers = m->num_workers};
    std::string id = ctx.jobs.Start(
        kind, bucket,
        [&tier = ctx.remote, &store, args](JobControl& jc) { return RunDeleteRemote(tier, store, jc, args); },
        Opts("", ctlmsg));
    co_return co_await ReplyJob(ex, id);
  }
  if (kind == "delete-listrange") {
    std::string id = ctx.jobs.Start(
        kind, bucket, [&store, bucket, s = *sel](JobControl& jc) { return RunDeleteObjects(store, jc, bucket, s); },
        Opts("", ctlmsg));
    co_return co_await ReplyJob(ex, id);
  }
  if (kind == "prefetch-listrange" && IsRemoteKey(bucket)) {
    // A positive threshold under 1 MiB is raised to 1 MiB, as AIS does.
    uint64_t threshold = m->blob_threshold == 0 ? 0 : std::max<uint64_t>(m->blob_threshold, 1 << 20);
    PrefetchArgs args{.key = bucket, .sel = *sel, .latest = m->latest, .continue_on_err = m->continue_on_err,
                      .num_workers = m->num_workers, .blob_threshold = threshold,
                      .blob = {.chunk_size = m->blob_chunk_size, .workers = m->blob_workers}};
    CacheTier& tier = ctx.remote;
    std::string id = ctx.jobs.Start(
        kind, bucket, [&tier, &store, args](JobControl& jc) { return RunPrefetch(tier, store, jc, args); },
        Opts("", ctlmsg));
    co_return co_await ReplyJob(ex, id);
  }
  if (kind == "evict-listrange" || kind == "prefetch-listrange") {
    std::string id = ctx.jobs.Start(
        kind, bucket, [&store, bucket, s = *sel](JobControl& jc) { return RunVisitObjects(store, jc, bucket, s); },
        Opts("", ctlmsg));
    co_return co_await ReplyJob(ex, id);
  }
  auto dst = Destination(m->to_bck, bucket);
  if (!dst.ok()) co_return dst.status();
  if (*dst != bucket) {  // (the route's check covered the source bucket)
    if (Status st = AuthorizeDestination(ctx, ex, *dst); !st.ok()) co_return st;
  }
  if (kind == "etl-listrange") {
    if (m->copy.latest || m->copy.sync) {
      co_return Status::NotSupported("etl-listrange: latest-ver and synchronize are not supported yet");
    }
    if (m->copy.etl_name.empty()) co_return Status::InvalidArgument("etl-listrange: no ETL named (value.id)");
    auto chain = etl::ResolveChain(*ctx.etl, m->copy.etl_name, m->copy.pipeline);
    if (!chain.ok()) co_return chain.status();
    etl::OfflineArgs args{.job_id = RandomId(10), .chain = std::move(*chain), .src = bucket, .dst = *dst, .prefix = "",
                          .sel = *sel, .naming = Naming(m->copy), .dry_run = m->copy.dry_run,
                          .continue_on_err = m->continue_on_err, .num_workers = m->num_workers};
    auto through = co_await PrepareDestination(ctx, args.dst, *props, args.dry_run);
    if (!through.ok()) co_return through.status();
    args.through = std::move(*through);
    JobOptions opts = Opts(args.dst, ctlmsg + " => " + Cname(args.dst) + ", etl:" + m->copy.etl_name);
    opts.id = args.job_id;
    opts.idles_after = true;  // as copy-listrange
    std::string id = ctx.jobs.Start(
        kind, bucket,
        [&tier = ctx.remote, &store, &etls = *ctx.etl, args, fetch = FetchFirst(bucket, *m, false)](JobControl& jc) {
          if (fetch) AIS_RETURN_IF_ERROR(RunPrefetch(tier, store, jc, *fetch));
          return etl::RunOfflineTransform(store, jc, etls, args);
        },
        std::move(opts));
    co_return co_await ReplyJob(ex, id);
  }
  if (kind == "copy-listrange") {
    if (!m->copy.etl_name.empty() || !m->copy.pipeline.empty()) {
      co_return Status::InvalidArgument("copy-listrange: an ETL (value.id, value.pipeline) is for etl-listrange");
    }
    CopyObjectsArgs args;
    args.src = bucket;
    args.dst = *dst;
    args.sel = *sel;
    args.naming = Naming(m->copy);
    args.dry_run = m->copy.dry_run;
    args.continue_on_err = m->continue_on_err;
    if (args.dst == bucket && args.naming.prepend.empty() && args.naming.ext.empty() && !args.dry_run) {
      co_return 
          Status::InvalidArgument("cannot copy objects of \"" + Cname(bucket) + "\" onto themselves");
    }
    // (into a remote bucket: the source's own too, under new names)
    auto through = co_await PrepareDestination(ctx, args.dst, *props, args.dry_run);
    if (!through.ok()) co_return through.status();
    args.through = std::move(*through);
    JobOptions opts = Opts(args.dst, ctlmsg + " => " + Cname(args.dst));
    opts.idles_after = true;  // AIS x-tco: a demand job, listed as idle until its idle timeout
    std::string id = ctx.jobs.Start(
        kind, bucket,
        [&tier = ctx.remote, &store, args, fetch = FetchFirst(bucket, *m, m->copy.latest)](JobControl& jc) {
          if (fetch) AIS_RETURN_IF_ERROR(RunPrefetch(tier, store, jc, *fetch));
          return RunCopyObjects(store, jc, args);
        },
        std::move(opts));
    co_return co_await ReplyJob(ex, id);
  }
  // archive
  if (IsRemoteKey(*dst)) {  // the shard would be written locally only: refused, not half done
    co_return Status::NotSupported("archive: writing a shard into remote bucket " + Cname(*dst) +
                                   " is not yet supported");
  }
  ArchiveArgs args;
  args.src = bucket;
  args.dst = *dst;
  args.archname = m->archname;
  args.sel = *sel;
  args.include_src_bucket = m->include_src_bucket;
  args.append = m->append;
  args.continue_on_err = m->continue_on_err;
  if (Status st = ValidateObjectName(args.archname); !st.ok()) {
    co_return Status::InvalidArgument("archive: invalid archname \"" + args.archname +
                                                             "\": " + st.message());
  }
  const std::string& mime = m->mime;
  if (!mime.empty()) {
    auto f = ParseArchiveMime(mime);
    if (!f.ok()) co_return f.status();
    args.format = *f;
  } else if (auto f = FormatFromName(args.archname)) {
    args.format = *f;
  } else {
    co_return Status::InvalidArgument(
        "archive: cannot tell the format of \"" + args.archname +
        "\" (expecting one of .tar, .tgz, .tar.gz, .tar.lz4, .zip, or a mime type)");
  }
  auto dprops = ctx.store.GetBucket(args.dst);
  if (!dprops.ok()) co_return dprops.status();
  std::string id = ctx.jobs.Start(
      kind, bucket,
      [&tier = ctx.remote, &store, args, fetch = FetchFirst(bucket, *m, false)](JobControl& jc) {
        if (fetch) AIS_RETURN_IF_ERROR(RunPrefetch(tier, store, jc, *fetch));
        return RunArchive(store, jc, args);
      },
      Opts(args.dst, ctlmsg + " => " + Cname(args.dst) + "/" + args.archname));
  co_return co_await ReplyJob(ex, id);
}

Task<Handled> GetBucketSummary(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  auto summ = SummaryMsg::Decode(msg.value);
  if (!summ.ok()) co_return summ.status();
  const std::string& uuid = summ->uuid;
  const std::string& prefix = summ->prefix;
  if (Status st = ValidatePrefix(prefix); !st.ok()) co_return st;
  if (uuid.empty()) {
    std::vector<std::string> buckets;
    if (bucket.empty()) {
      for (auto& b : ctx.store.buckets().Names()) {
        if (!b.starts_with('.')) buckets.push_back(b);
      }
    } else {
      auto props = ctx.store.GetBucket(bucket);
      if (!props.ok()) co_return props.status();
      buckets.push_back(bucket);
    }
    std::string id = StartSummary(ctx, std::move(buckets), prefix, bucket);
    co_return co_await ex.Reply(http::status::accepted, {}, id, "text/plain");
  }
  Status err;
  switch (SummaryStatus(ctx, uuid, &err)) {
    case SummaryState::kUnknown:
      co_return Status::NotFound("summary-bck[" + uuid + "] not found");
    case SummaryState::kRunning:
      co_return co_await ex.Reply(http::status::accepted, {}, "[]", "application/json");
    case SummaryState::kFailed: co_return err;
    case SummaryState::kDone: break;
  }
  nlohmann::json out = nlohmann::json::array();
  if (auto r = Summaries().Get(uuid)) {
    for (auto& [b, s] : *r) out.push_back(SummaryJson(b, s));
  }
  co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
}

Task<Handled> HeadBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& prefix = call.route.object;
  auto binfo = ex.query("bsumm_remote");
  if (!binfo && !prefix.empty()) {
    co_return Status::InvalidArgument("invalid URL '" + std::string(ex.raw_path()) +
                                                             "': expecting just the bucket name, got '" + bucket +
                                                             "' and '" + prefix + "'");
  }
  if (auto flt = ex.query("presence"); flt && !flt->empty()) {
    auto n = ParseUint(*flt);
    if (!n || *n > 5) {
      co_return Status::InvalidArgument("parse 'flt-presence': invalid value \"" + *flt + "\"");
    }
  }
  if (Status st = ValidatePrefix(prefix); !st.ok()) co_return st;
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  HeaderList headers = {{hdr::kBucketProps, JsonText(props->ToAisJson(bucket, ctx.store.capacity().config()))}};
  if (IsRemoteAisKey(bucket)) {  // which remote cluster (AIS: apc.HdrRemAis*)
    AisClusters& clusters = ctx.remote.ais_clusters();
    const std::string uuid = KeyNs(bucket).uuid;
    const nlohmann::json config = clusters.ConfigJson();
    for (const auto& [alias, urls] : config.items()) {  // (as last probed: no request now)
      if (clusters.KnownUuid(alias) != uuid || !urls.is_array() || urls.empty()) continue;
      headers.emplace_back("Ais-Remote-Ais-Uuid", uuid);
      headers.emplace_back("Ais-Remote-Ais-Alias", alias);
      headers.emplace_back("Ais-Remote-Ais-Url", urls[0].get<std::string>());
      break;
    }
  }
  if (!binfo) co_return co_await ex.ReplyHeaders(http::status::ok, headers, std::nullopt);
  std::string uuid = ex.query("uuid").value_or("");
  if (uuid.empty()) {
    std::vector<std::string> one = {bucket};
    std::string id = StartSummary(ctx, std::move(one), prefix, bucket);
    headers.emplace_back(kHdrXactionId, id);
    co_return co_await ex.ReplyHeaders(http::status::accepted, headers, std::nullopt);
  }
  headers.emplace_back(kHdrXactionId, uuid);
  Status err;
  switch (SummaryStatus(ctx, uuid, &err)) {
    case SummaryState::kUnknown:
      co_return Status::NotFound("summary-bck[" + uuid + "] not found");
    case SummaryState::kRunning: co_return co_await ex.ReplyHeaders(http::status::accepted, headers, std::nullopt);
    case SummaryState::kFailed: co_return err;
    case SummaryState::kDone: break;
  }
  if (auto r = Summaries().Get(uuid); r && !r->empty()) {
    headers.emplace_back(kHdrBucketSumm, JsonText(SummaryJson(r->front().first, r->front().second)));
  }
  co_return co_await ex.ReplyHeaders(http::status::ok, headers, std::nullopt);
}

Task<Handled> ResetBucketProps(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  const std::string& bucket = call.bucket;
  nlohmann::json defaults = {
      {"checksum", {{"type", BucketProps{}.checksum_type}, {"validate_warm_get", false}, {"enable_read_range", false}}},
      {"versioning", {{"enabled", true}}},
      {"chunks", {{"objsize_limit", 0}, {"max_monolithic_size", 0}, {"chunk_size", 0}, {"checkpoint_every", 0}}}};
  Status st = ctx.store.UpdateBucket(bucket, defaults);
  if (!st.ok()) co_return st;
  LogInfo("reset-bprops ais://" + bucket);
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> Promote(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  auto pm = PromoteMsg::Decode(msg.value);
  if (!pm.ok()) co_return pm.status();
  std::string src = msg.name;
  const std::string& vsrc = pm->src;
  if (!vsrc.empty()) {
    if (!src.empty() && src != vsrc) {
      co_return 
          Status::InvalidArgument("conflicting promote source: \"" + src + "\" vs \"" + vsrc + "\"");
    }
    src = vsrc;
  }
  auto invalid = [&](const std::string& detail) {
    std::string m = "invalid promote source";
    if (!src.empty()) m += " \"" + src + "\"";
    return Status::InvalidArgument(m + ": " + detail);
  };
  const std::string& root = ctx.promote_root;
  Status bad;
  if (src.empty()) {
    bad = Status::InvalidArgument("invalid promote source: pathname is empty");
  } else if (!src.starts_with('/')) {
    bad = invalid("must be an absolute path");
  } else if (!ValidatePrefix(src.substr(1)).ok() || src.find("/./") != std::string::npos || src.ends_with("/.")) {
    bad = invalid("must not contain '.' or '..' path elements");
  } else if (root.empty() || (src != root && !src.starts_with(root + "/"))) {
    bad = invalid("must be under " + (root.empty() ? std::string("the promote root (disabled)") : root));
  }
  if (!bad.ok()) co_return bad;
  PromoteArgs args;
  args.root = root;
  args.src = src;
  args.bucket = bucket;
  args.obj = pm->obj;
  args.recursive = pm->recursive;
  args.overwrite = pm->overwrite;
  args.delete_src = pm->delete_src;
  if (!args.obj.empty()) {
    if (Status st = ValidatePrefix(args.obj); !st.ok()) co_return st;
  }
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  // A file is promoted before the reply, a directory by a job; both read files: off the I/O thread.
  std::function<Result<bool>()> file_or_dir = [&store = ctx.store, args]() -> Result<bool> {
    auto is_dir = PromoteSourceIsDir(args);
    if (!is_dir.ok() || *is_dir) return is_dir;
    bool promoted = false;
    AIS_RETURN_IF_ERROR(PromoteFile(store, args, &promoted));
    return false;
  };
  auto is_dir = co_await Offload<bool>(ctx.remote.pool(), std::move(file_or_dir));
  if (!is_dir.ok()) co_return is_dir.status();
  if (*is_dir) {
    Store& store = ctx.store;
    std::string id = ctx.jobs.Start(
        "promote", bucket, [&store, args](JobControl& jc) { return RunPromoteDir(store, jc, args); },
        Opts("", "src:" + src + ", dst:" + Cname(bucket) + "/" + args.obj +
                             (args.recursive ? ", flags:recurs" : ", flags:non-recurs")));
    co_return co_await ReplyJob(ex, id);
  }
  co_return co_await ex.Reply(http::status::ok);
}

}  // namespace ais
