// /v1/buckets: list buckets, create/destroy/head/set-props, list objects, rechunk.
#include "api/headers.h"
#include "api/moss_request.h"
#include "api/object_list.h"
#include "archive/arch_dir.h"
#include "handlers/bucket_actions.h"
#include "handlers/handlers.h"
#include "jobs/maintenance_jobs.h"
#include "service/context.h"
#include "service/offload.h"
#include "service/remote.h"
#include "remote/cache_tier.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {

// {"action":"list"}: nothing in the message narrows the answer.
Task<Handled> ListBuckets(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  if (!provider.ok()) co_return provider.status();
  auto ns = NamespaceOf(ex);
  if (!ns.ok()) co_return ns.status();
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  nlohmann::json out = nlohmann::json::array();
  auto entry = [](std::string_view provider, std::string_view name, const BucketNs& ns = {}) {
    return nlohmann::json{{"name", name}, {"provider", provider}, {"namespace", {{"uuid", ns.uuid}, {"name", ns.name}}}};
  };
  const std::string raw = ex.query("provider").value_or("");
  auto presence = ParseUint(ex.query("presence").value_or(""));
  const bool present_only = presence && *presence >= 2 && *presence <= 4;
  if (!ns->global() && !raw.empty() && *provider != kProviderAis) {
    co_return Status::NotSupported("bucket namespaces are served for ais:// buckets only (not " +
                                   std::string(ProviderScheme(*provider)) + ns->Display() + ")");
  }
  if (ns->remote()) {  // ais://@ (every attached cluster) or ais://@alias: their buckets, asked now
    std::function<Result<std::vector<RemoteAisBucket>>()> list = [&tier = ctx.remote, ns = *ns] {
      return tier.ais_clusters().ListBuckets(ns);
    };
    auto listed = co_await Offload<std::vector<RemoteAisBucket>>(ctx.remote.pool(), std::move(list));
    if (!listed.ok()) co_return listed.status();
    for (auto& b : *listed) out.push_back(entry(kProviderAis, b.name, b.ns));
    co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
  }
  if (!raw.empty() && IsServedCloud(*provider) && !present_only) {
    // Every bucket the credentials see, from the backend (the ones in the BMD among them).
    std::function<Result<std::vector<std::string>>()> list = [&tier = ctx.remote, p = *provider] {
      return tier.ListBuckets(p);
    };
    auto names = co_await Offload<std::vector<std::string>>(ctx.remote.pool(), std::move(list));
    if (!names.ok()) co_return names.status();
    for (auto& n : *names) out.push_back(entry(*provider, n));
    co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
  }
  // The BMD: ais buckets for provider=ais (the default), every provider's for an empty one;
  // every local namespace's, or only the one the query names. (AIS also lists each configured
  // cloud's buckets for an empty provider; here that takes provider=aws, so that listing never
  // waits on a backend unasked.)
  for (auto& key : ctx.store.buckets().Names()) {
    if (key.starts_with('.') || IsRemoteAisKey(key)) continue;  // system buckets (inventories); remote clusters'
    std::string_view p = KeyProvider(key);
    if (!raw.empty() && p != *provider) continue;
    const BucketNs key_ns = KeyNs(key);
    if (!ns->global() && key_ns != *ns) continue;
    out.push_back(entry(p, KeyName(key), key_ns));
  }
  co_return co_await ex.Reply(http::status::ok, {}, JsonText(out), "application/json");
}

namespace {

// Bits a listing via inventory rejects: missing, deleted, arch-dir, not-cached, only-remote-props, diff.
constexpr uint64_t kNbiBadListFlags = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 9) | (1 << 10) | (1 << 12);

Task<Handled> ListFromInventory(ServerContext& ctx, Exchange& ex, const std::string& bucket, const ListObjectsMsg& msg,
                                uint64_t page_size) {
  if (!msg.start_after.empty() || (msg.flags & kNbiBadListFlags)) {
    co_return Status::InvalidArgument("bucket " + BucketCname(bucket) +
                                      ": the request to list via native bucket inventory has invalid or unsupported flags");
  }
  auto inv = ctx.inventory.Resolve(bucket, std::string(ex.header("Ais-Inv-Name")));
  if (!inv.ok()) co_return inv.status();
  auto page = (msg.flags & kLsNoRecursion)
                  ? ctx.inventory.PageNoRecursion(bucket, *inv, msg.prefix, msg.continuation_token, page_size,
                                                  (msg.flags & kLsNoDirs) != 0)
                  : ctx.inventory.Page(bucket, *inv, msg.prefix, msg.continuation_token, page_size);
  if (!page.ok()) co_return page.status();
  std::string uuid = msg.uuid.empty() ? RandomId(10) : msg.uuid;
  std::string token = page->entries.size() == page_size ? page->last_name : "";
  if (ex.header("Accept").find("application/msgpack") != std::string_view::npos) {
    co_return co_await ex.Reply(http::status::ok, {}, EncodeRawPageMsgpack(uuid, token, page->entries),
                                "application/msgpack");
  }
  co_return co_await ex.Reply(http::status::ok, {}, EncodeRawPageJson(uuid, token, page->entries), "application/json");
}

}  // namespace

Task<Handled> CreateInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  // apc.CreateNBIMsg: name, names_per_chunk, force and the LsoMsg fields, flattened.
  ListObjectsMsg lso;
  CreateInventoryOptions opts;
  JsonFields f(msg.value, "value");
  lso.Read(f);
  f.Str("name", &opts.name).Bool("force", &opts.force);
  f.Uint("names_per_chunk", &opts.names_per_chunk).Unused(JsonFields::Kind::kInt, {"pages_per_chunk", "max_entries_per_chunk"});
  if (Status st = f.Finish(); !st.ok()) co_return st;
  if (!lso.continuation_token.empty()) {
    co_return Status::InvalidArgument("create-inventory: continuation_token must be empty");
  }
  if (!lso.start_after.empty()) {
    co_return Status::InvalidArgument("create-inventory: start_after is not supported");
  }
  if (Status st = ValidatePrefix(lso.prefix); !st.ok()) co_return st;
  opts.prefix = lso.prefix;
  opts.props = lso.props;
  opts.flags = lso.flags;
  if (IsRemoteKey(bucket)) {
    // The backend's listing, once, with what is cached as of now.
    opts.remote = [&tier = ctx.remote, &store = ctx.store, bucket,
                   prefix = lso.prefix](const std::string& token) -> Result<std::pair<std::vector<ListEntry>, std::string>> {
      auto page = ListRemotePage(tier, store, bucket, {.prefix = prefix, .token = token, .no_dirs = true});
      if (!page.ok()) return page.status();
      std::vector<ListEntry> out;
      out.reserve(page->entries.size());
      for (size_t i = 0; i < page->entries.size(); ++i) {
        out.push_back(ListEntry{.meta = std::move(page->entries[i]), .flags = page->extra_flags[i]});
      }
      return std::make_pair(std::move(out), std::move(page->continuation_token));
    };
  }
  if (opts.name.empty()) opts.name = msg.name;
  auto id = ctx.inventory.StartCreate(bucket, std::move(opts));
  if (!id.ok()) co_return id.status();
  co_return co_await ex.Reply(http::status::ok, {}, *id, "text/plain");
}

namespace {

void SplitArchDir(std::vector<ArchDirEntry> listed, ListPage* page) {
  page->entries.reserve(listed.size());
  page->extra_flags.reserve(listed.size());
  for (auto& e : listed) {
    page->entries.push_back(std::move(e.meta));
    page->extra_flags.push_back(e.flags);
  }
}

// The bucket's objects under q.prefix after q.after, with the files inside archives (LsArchDir).
Result<std::vector<ListEntry>> FetchEntries(Store& store, const std::string& bucket, const ListQuery& q,
                                            bool arch_dir) {
  std::vector<ListEntry> out;
  if (arch_dir) {
    auto listed = ListWithArchives(store, bucket, q);
    if (!listed.ok()) return listed.status();
    out.reserve(listed->size());
    for (auto& e : *listed) out.push_back(ListEntry{.meta = std::move(e.meta), .flags = e.flags});
    return out;
  }
  auto listed = store.List(bucket, q);
  if (!listed.ok()) return listed.status();
  out.reserve(listed->size());
  for (auto& m : *listed) out.push_back(ListEntry{.meta = std::move(m), .flags = 0});
  return out;
}

}  // namespace

Task<Handled> ListObjects(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  auto msg = ListObjectsMsg::FromJson(call.msg.value);
  if (!msg.ok()) co_return msg.status();
  if (Status st = ValidatePrefix(msg->prefix); !st.ok()) co_return st;
  auto props = ListProps::Parse(msg->props, msg->flags);
  if (!props.ok()) co_return props.status();
  uint64_t page = msg->page_size == 0 ? ctx.max_page_size : std::min(msg->page_size, ctx.max_page_size);
  if (IsRemoteKey(bucket) && !(msg->flags & (kLsCached | kLsNbi))) {
    co_return co_await ListRemoteObjects(ctx, ex, bucket, *msg, *props, page);
  }
  if (msg->flags & kLsNotCached) {
    co_return Status::InvalidArgument("flag \"not-cached\" is not supported for ais:// buckets");
  }
  if (msg->flags & kLsNbi) co_return co_await ListFromInventory(ctx, ex, bucket, *msg, page);
  const std::string& after = msg->continuation_token.empty() ? msg->start_after : msg->continuation_token;
  const bool arch_dir = (msg->flags & kLsArchDir) != 0;
  std::string location = "t[" + ctx.node.daemon_id + "]";
  const bool msgpack = ex.header("Accept").find("application/msgpack") != std::string_view::npos;
  if (msgpack && !arch_dir && !(msg->flags & kLsNoRecursion)) {
    // The common listing: packed as the store visits the objects.
    MsgpackPageBuilder builder(*props, std::move(location));
    std::string last;
    // LsNameOnly lists names without metadata (as AIS's walk): no header read.
    ListQuery q{.prefix = msg->prefix, .after = after, .limit = page, .headers = !(msg->flags & kLsNameOnly)};
    Status st = ctx.store.ListEach(bucket, q,
                                   [&](const std::string& name, const ObjectMeta& meta) {
                                     builder.Add(name, meta);
                                     last.assign(name);  // reuses its buffer: no allocation per entry
                                   });
    if (!st.ok()) co_return st;
    if (builder.count() < page) last.clear();  // the last page: no continuation
    std::string body = builder.Finish(msg->uuid.empty() ? RandomId(10) : msg->uuid, last);
    co_return co_await ex.Reply(http::status::ok, {}, std::move(body), "application/msgpack");
  }
  ListPage out;
  if (msg->flags & kLsNoRecursion) {
    Store& store = ctx.store;
    ListFetch fetch = [&](const std::string& from, size_t limit) {
      return FetchEntries(store, bucket, ListQuery{.prefix = msg->prefix, .after = from, .limit = limit}, arch_dir);
    };
    auto listed = ListNoRecursion(msg->prefix, after, page, (msg->flags & kLsNoDirs) != 0, fetch);
    if (!listed.ok()) co_return listed.status();
    out.entries.reserve(listed->size());
    out.extra_flags.reserve(listed->size());
    for (auto& e : *listed) {
      out.entries.push_back(std::move(e.meta));
      out.extra_flags.push_back(e.flags);
    }
  } else {
    ListQuery q{.prefix = msg->prefix, .after = after, .limit = page};
    if (arch_dir) {
      auto listed = ListWithArchives(ctx.store, bucket, q);
      if (!listed.ok()) co_return listed.status();
      SplitArchDir(std::move(*listed), &out);
    } else {
      auto entries = ctx.store.List(bucket, q);
      if (!entries.ok()) co_return entries.status();
      out.entries = std::move(*entries);
    }
  }
  out.uuid = msg->uuid.empty() ? RandomId(10) : msg->uuid;
  if (out.entries.size() == page) out.continuation_token = out.entries.back().name;
  if (msgpack) {
    co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageMsgpack(out, *props, location),
                                "application/msgpack");
  }
  co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageJson(out, *props, location), "application/json");
}

namespace {

// Rechunk job: every object under the prefix becomes monolithic (size < limit or limit 0) or chunks
// of chunk_size.
Status RunRechunk(Store& store, JobControl& jc, const std::string& bucket, const std::string& prefix,
                  uint64_t limit, uint64_t chunk_size) {
  ListQuery q{.prefix = prefix, .after = "", .limit = 1000};
  for (;;) {
    auto page = store.List(bucket, q);
    if (!page.ok()) return page.status();
    for (auto& m : *page) {
      if (jc.aborted()) return Status::OK();
      uint64_t target = (limit == 0 || m.size < limit) ? 0 : chunk_size;
      AIS_RETURN_IF_ERROR(store.Rechunk(bucket, m.name, target));
      jc.Add(1, static_cast<int64_t>(m.size));
    }
    if (page->size() < q.limit) return Status::OK();
    q.after = page->back().name;
  }
}

Task<Handled> RechunkJob(ServerContext& ctx, Exchange& ex, const std::string& bucket, const nlohmann::json& v) {
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return props.status();
  auto msg = RechunkMsg::Decode(v);
  if (!msg.ok()) co_return msg.status();
  uint64_t l = msg->objsize_limit.value_or(props->objsize_limit);
  uint64_t c = msg->chunk_size.value_or(props->chunk_size);
  if (c == 0 && l > 0) co_return Status::InvalidArgument("chunk size is not set");
  if (c != 0 && (c < kMinChunkSize || c > kMaxChunkSize)) {
    co_return Status::InvalidArgument("chunk-size must be in [1KiB, 5GiB]");
  }
  const std::string prefix = msg->prefix;
  if (Status st = ValidatePrefix(prefix); !st.ok()) co_return st;
  Store& store = ctx.store;
  std::string id = ctx.jobs.Start("rechunk", bucket, [&store, bucket, prefix, l, c](JobControl& jc) {
    return RunRechunk(store, jc, bucket, prefix, l, c);
  });
  co_return co_await ex.Reply(http::status::ok, {}, id, "text/plain");
}

// A props document's `extra.aws.endpoint`, checked against the operator's list before it is
// stored (CacheTier::ClientFor checks again before any request goes there).
Status CheckPropsEndpoint(ServerContext& ctx, const nlohmann::json& props) {
  if (!props.is_object()) return Status::OK();
  auto extra = props.find("extra");
  if (extra == props.end() || !extra->is_object()) return Status::OK();
  auto aws = extra->find("aws");
  if (aws == extra->end() || !aws->is_object()) return Status::OK();
  auto endpoint = aws->find("endpoint");
  if (endpoint == aws->end() || !endpoint->is_string()) return Status::OK();  // (a wrong type: Update says so)
  return ctx.remote.CheckEndpoint(endpoint->get<std::string>());
}

}  // namespace

Task<Handled> StartRechunkJob(ServerContext& ctx, Exchange& ex, const std::string& bucket,
                              const nlohmann::json& value) {
  co_return co_await RechunkJob(ctx, ex, bucket, value);
}

Task<Handled> StartRechunk(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  co_return co_await RechunkJob(ctx, ex, call.bucket, call.msg.value);
}

// Explicit create-bck of a remote bucket: it must exist in the backend; it is added to the BMD
// with the given props (AIS: HEAD with the props, then add).
Task<Handled> CreateRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& key = call.bucket;
  const nlohmann::json& props = call.msg.value;
  if (ctx.store.buckets().Get(key)) {
    co_return Status::AlreadyExists("bucket \"" + BucketCname(key) + "\" already exists");
  }
  if (Status st = CheckPropsEndpoint(ctx, props); !st.ok()) co_return st;
  if (Status st = ctx.remote.CheckEnabled(KeyProvider(key)); !st.ok()) co_return st;
  if (IsRemoteAisKey(key)) {  // created there, as AIS reverse-proxies it, then added here
    std::function<Status()> create = [&tier = ctx.remote, key] { return tier.CreateOnRemoteAis(key); };
    if (Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(create)); !st.ok()) co_return st;
  }
  std::function<Status()> add = [&tier = ctx.remote, key] { return tier.AddBucket(key); };
  Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(add));
  if (st.IsNotFound()) {
    co_return Status::NotSupported(std::string(KeyProvider(key)) + " bucket \"" + BucketCname(key) + "\" does not exist");
  }
  if (st.ok() && !props.is_null() && !props.empty()) st = ctx.store.UpdateBucket(key, props);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// evict-remote-bck: drops every cached object (the backend keeps its data); `keep_bck_md`
// keeps the bucket and its props in the BMD.
Task<Handled> EvictRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& key = call.bucket;
  auto props = ctx.store.GetBucket(key);
  if (!props.ok()) co_return props.status();
  const bool keep_md = IEquals(ex.query("keep_bck_md").value_or(""), "true");
  Status st = ctx.inventory.Destroy(key, "");
  if (st.ok()) st = ctx.store.DestroyBucket(key);
  if (st.ok() && keep_md) st = ctx.store.CreateBucket(key, props->ToAisJson(key, ctx.store.capacity().config()));
  if (!st.ok()) co_return st;
  LogInfo("evicted remote bucket " + BucketCname(key) + (keep_md ? " (props kept)" : ""));
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> CreateBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  Status st = CheckPropsEndpoint(ctx, call.msg.value);
  if (st.ok()) st = ctx.store.CreateBucket(call.bucket, call.msg.value);
  if (!st.ok()) co_return st;
  LogInfo("created bucket " + BucketCname(call.bucket));
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> MoveRemoteBucket(ServerContext&, Exchange&, const ApiCall& call) {
  co_return Status::MethodNotAllowed("cannot rename/move remote bucket " + BucketCname(call.bucket) +
                                     " - operation not supported");
}

Task<Handled> ShowInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  if (!call.bucket.empty()) {
    auto info = ctx.inventory.Show(call.bucket, call.msg.name);
    if (!info.ok()) co_return info.status();
    co_return co_await ex.Reply(http::status::ok, {}, info->dump(), "application/json");
  }
  // No bucket (`ais nbi show`, `ais nbi show s3:`): every bucket's, of the provider the query
  // names if it names one, merged (the keys, inventory object names, never collide).
  const std::string raw = ex.query("provider").value_or("");
  auto provider = NormalizeProvider(raw);
  if (!provider.ok()) co_return provider.status();
  auto ns = NamespaceOf(ex);
  if (!ns.ok()) co_return ns.status();
  nlohmann::json out = nlohmann::json::object();
  for (const auto& key : ctx.store.buckets().Names()) {
    if (key.starts_with('.') || (!raw.empty() && KeyProvider(key) != *provider)) continue;
    if (!ns->global() && KeyNs(key) != *ns) continue;
    auto info = ctx.inventory.Show(key, call.msg.name);
    if (!info.ok()) {
      if (info.status().IsNotFound()) continue;  // the bucket was destroyed meanwhile
      co_return info.status();
    }
    out.update(*info);
  }
  co_return co_await ex.Reply(http::status::ok, {}, out.dump(), "application/json");
}

Task<Handled> DestroyInventory(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  if (!call.msg.name.empty()) {
    if (Status st = InventoryCatalog::ValidateName(call.msg.name); !st.ok()) co_return st;
  }
  Status st = ctx.inventory.Destroy(call.bucket, call.msg.name);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> DestroyBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  Status st = ctx.inventory.Destroy(call.bucket, "");  // a bucket's inventories go with it
  if (st.ok()) st = ctx.store.DestroyBucket(call.bucket);
  if (!st.ok()) co_return st;
  LogInfo("destroyed bucket " + BucketCname(call.bucket));
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> DestroyRemoteBucket(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  if (IsRemoteAisKey(call.bucket)) {  // AIS: the local entry dropped, then the remote bucket destroyed there
    Status st = ctx.inventory.Destroy(call.bucket, "");
    if (st.ok() || st.IsNotFound()) st = ctx.store.DestroyBucket(call.bucket);
    if (!st.ok() && !st.IsNotFound()) co_return st;
    std::function<Status()> destroy = [&tier = ctx.remote, key = call.bucket] { return tier.DestroyOnRemoteAis(key); };
    if (Status rst = co_await OffloadStatus(ctx.remote.pool(), std::move(destroy)); !rst.ok()) co_return rst;
    LogInfo("destroyed bucket " + BucketCname(call.bucket) + " (on the remote cluster too)");
    co_return co_await ex.Reply(http::status::ok);
  }
  co_return Status::MethodNotAllowed("cannot destroy cloud bucket " + BucketCname(call.bucket) +
                                     " - operation not supported");
}

namespace {

// The make-n-copies job over bucket's objects (RunMakeNCopies); its ID.
std::string StartMakeNCopies(ServerContext& ctx, const std::string& bucket, size_t copies) {
  Store& store = ctx.store;
  JobOptions opts;
  opts.ctlmsg = BucketCname(bucket) + ", copies " + std::to_string(copies);
  return ctx.jobs.Start("make-n-copies", bucket,
                        [&store, bucket, copies](JobControl& jc) { return RunMakeNCopies(store, jc, bucket, copies); },
                        std::move(opts));
}

}  // namespace

Task<Handled> SetBucketProps(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto before = ctx.store.GetBucket(call.bucket);
  Status st = CheckPropsEndpoint(ctx, call.msg.value);
  if (st.ok()) st = ctx.store.UpdateBucket(call.bucket, call.msg.value);
  if (!st.ok()) co_return st;
  LogInfo("set-bprops " + BucketCname(call.bucket) + ": " + JsonText(call.msg.value));
  // AIS: a change of the mirror's copies runs make-n-copies; its ID is the reply.
  auto after = ctx.store.GetBucket(call.bucket);
  if (before.ok() && after.ok() && before->copies() != after->copies()) {
    co_return co_await ex.Reply(http::status::ok, {}, StartMakeNCopies(ctx, call.bucket, after->copies()), "text/plain");
  }
  co_return co_await ex.Reply(http::status::ok);
}

// AIS make-n-copies (`ais start mirror BUCKET --copies N`): value N in [1, mountpaths]; sets
// mirror.enabled (N > 1) and mirror.copies, then brings every object to N copies (job).
Task<Handled> MakeNCopies(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const nlohmann::json& v = call.msg.value;
  const size_t mountpaths = ctx.store.mountpaths().count();
  std::optional<int64_t> n;
  if (v.is_number_integer()) n = v.get<int64_t>();
  if (v.is_string()) {
    if (auto u = ParseUint(v.get<std::string>())) n = static_cast<int64_t>(*u);
  }
  if (!n || *n < 1 || *n > 32 || static_cast<size_t>(*n) > mountpaths) {
    co_return Status::InvalidArgument("invalid number of copies: " + v.dump().substr(0, 64) +
                                      " (expected value in range [1, " + std::to_string(std::min<size_t>(mountpaths, 32)) +
                                      "]: at most the number of mountpaths)");
  }
  const auto copies = static_cast<size_t>(*n);
  nlohmann::json patch = {{"mirror", {{"enabled", copies > 1}}}};
  if (copies > 1) patch["mirror"]["copies"] = copies;
  if (Status st = ctx.store.UpdateBucket(call.bucket, patch); !st.ok()) co_return st;
  LogInfo("make-n-copies " + BucketCname(call.bucket) + ": " + std::to_string(copies));
  co_return co_await ex.Reply(http::status::ok, {}, StartMakeNCopies(ctx, call.bucket, copies), "text/plain");
}

}  // namespace ais
