#include "service/remote.h"

#include <algorithm>
#include <map>

#include "api/moss_request.h"
#include "service/offload.h"
#include "remote/cache_tier.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/strings.h"

namespace ais {
namespace {

bool QueryTrue(const Exchange& ex, std::string_view key) { return IEquals(ex.query(key).value_or(""), "true"); }

// What a listing says of an object the remote has and this node does not.
ObjectMeta FromRemoteEntry(const RemoteListEntry& e) {
  ObjectMeta m;
  m.name = e.name;
  m.size = e.size;
  m.cksum_value = e.md5;
  if (!m.cksum_value.empty()) m.cksum_type = "md5";
  if (!e.etag.empty()) m.custom.emplace_back("ETag", e.etag);
  if (!e.last_modified.empty()) m.custom.emplace_back("LastModified", e.last_modified);
  return m;
}

// Whether the cached copy still is the remote object; kNotFound when the remote has none.
Task<Result<bool>> SameAsRemote(ServerContext& ctx, const std::string& key, const ObjectMeta& cached) {
  std::function<Result<bool>()> compare = [&tier = ctx.remote, key, cached] { return tier.InSync(key, cached); };
  co_return co_await Offload<bool>(ctx.remote.pool(), std::move(compare));
}

}  // namespace

Result<std::string> NameBucket(ServerContext& ctx, const Exchange& ex, const std::string& name) {
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  if (!provider.ok()) return provider.status();
  auto ns = NamespaceOf(ex);
  if (!ns.ok()) return ns.status();
  return NameBucketOf(ctx, *provider, *ns, name);
}

Result<std::string> NameBucketOf(ServerContext& ctx, std::string_view provider_name, const BucketNs& ns,
                                 const std::string& name) {
  auto provider = NormalizeProvider(provider_name);
  if (!provider.ok()) return provider.status();
  AIS_RETURN_IF_ERROR(ValidateBucketName(name));
  AIS_RETURN_IF_ERROR(ValidateNamespace(ns));
  if (*provider != kProviderAis && !IsServedCloud(*provider)) {
    return Status::NotSupported("provider \"" + *provider + "\" is not served by this server (only ais, aws, gcp and azure)");
  }
  if (ns.global()) return BucketKey(*provider, name);
  if (*provider != kProviderAis) {
    return Status::NotSupported("bucket namespaces are served for ais:// buckets only (not " +
                                std::string(ProviderScheme(*provider)) + ns.Display() + "/" + name + ")");
  }
  if (!ns.remote()) return BucketKey(kProviderAis, ns, name);
  if (ns.uuid == "@") {
    return Status::InvalidArgument("namespace \"@@#\" (any remote cluster) names no one bucket (" + name + ")");
  }
  auto uuid = ctx.remote.ais_clusters().ResolveUuid(ns.uuid);
  if (!uuid.ok()) return uuid.status();
  return BucketKey(kProviderAis, BucketNs{.uuid = *uuid, .name = ns.name}, name);
}

Task<Result<std::string>> ResolveBucket(ServerContext& ctx, Exchange& ex, const std::string& name) {
  auto key = NameBucket(ctx, ex, name);
  if (!key.ok()) co_return key.status();
  auto presence = ParseUint(ex.query("presence").value_or(""));
  const bool bmd_only = presence && *presence >= 2 && *presence <= 4;  // "present" asks about the BMD only
  co_return co_await AddRemoteBucket(ctx, *key, !bmd_only);
}

Task<Result<std::string>> ResolveBucketOf(ServerContext& ctx, std::string_view provider, const std::string& name,
                                          bool add_remote) {
  auto key = NameBucketOf(ctx, provider, BucketNs{}, name);
  if (!key.ok()) co_return key.status();
  co_return co_await AddRemoteBucket(ctx, *key, add_remote);
}

Task<Result<std::string>> AddRemoteBucket(ServerContext& ctx, const std::string& key, bool add_remote) {
  if (!IsRemoteKey(key) || ctx.store.buckets().Get(key)) co_return key;
  if (Status st = ctx.remote.CheckEnabled(KeyProvider(key)); !st.ok()) co_return st;
  if (!add_remote) co_return BucketRegistry::NotFound(key);
  std::function<Status()> add = [&tier = ctx.remote, key] { return tier.AddBucket(key); };
  Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(add));
  if (!st.ok()) co_return st;
  co_return key;
}

Result<BlobRequest> ParseBlobRequest(const Exchange& ex) {
  BlobRequest req;
  if (auto t = ex.header("Ais-Blob-Threshold"); !t.empty()) {
    req.threshold = ParseUint(t);
    if (!req.threshold) {
      return Status::InvalidArgument("blob-downloader: failed to parse threshold \"" + std::string(t) +
                                     "\" (expecting a non-negative number of bytes)");
    }
  }
  if (!IEquals(ex.header("Ais-Blob-Download"), "true") && !req.threshold) return req;
  if (auto chunk = ex.header("Ais-Blob-Chunk"); !chunk.empty()) {
    auto n = ParseIecSize(chunk);
    if (!n) return Status::InvalidArgument("blob-downloader: failed to parse chunk size \"" + std::string(chunk) + "\"");
    req.options.chunk_size = *n;
  }
  if (auto workers = ex.header("Ais-Blob-Workers"); !workers.empty()) {
    const bool serial = workers == "-1";
    auto v = serial ? std::optional<uint64_t>(0) : ParseUint(workers);
    if (!v || *v > 128) {
      return Status::InvalidArgument("blob-downloader: failed to parse number of workers \"" + std::string(workers) +
                                     "\" (expecting -1..128)");
    }
    req.options.workers = serial ? -1 : static_cast<int64_t>(*v);
  }
  req.blob = !req.threshold;  // with a threshold, the remote size decides
  return req;
}

Task<Status> EnsureCached(ServerContext& ctx, Exchange& ex, const std::string& key, const std::string& name,
                          const Result<ObjectMeta>* head) {
  auto blob = ParseBlobRequest(ex);
  if (!blob.ok()) co_return blob.status();
  auto props = ctx.store.GetBucket(key);
  if (!props.ok()) co_return props.status();
  Result<ObjectMeta> local = head ? *head : ctx.store.Head(key, name);
  bool replace = false;
  if (local.ok()) {
    const bool check = QueryTrue(ex, "latest-ver") || props->remote_validate_warm_get || props->remote_sync;
    if (!check) co_return Status::OK();  // warm
    auto same = co_await SameAsRemote(ctx, key, *local);
    if (!same.ok()) {
      if (!same.status().IsNotFound()) co_return same.status();
      if (props->remote_sync) (void)ctx.store.Delete(key, name);
      co_return Status::NotFound(ctx.node.node_id + ": " + ObjectCname(key, name) + " does not exist");
    }
    if (*same) co_return Status::OK();
    replace = true;  // changed remotely: fetch the new version
  } else if (!local.status().IsNotFound()) {
    co_return local.status();
  }
  std::function<Result<ObjectMeta>()> fetch = [&tier = ctx.remote, key, name, replace, blob = *blob] {
    bool use_blob = blob.blob;
    if (blob.threshold) {  // the blob downloader only for an object at least this big
      auto head = tier.Head(key, name);
      if (!head.ok()) return Result<ObjectMeta>(head.status());
      use_blob = head->size >= *blob.threshold;
    }
    return tier.ColdGet(key, name, replace, use_blob ? std::optional<BlobOptions>(blob.options) : std::nullopt);
  };
  auto fetched = co_await Offload<ObjectMeta>(ctx.remote.pool(), std::move(fetch));
  co_return fetched.status();
}

Task<Result<ObjectMeta>> HeadRemote(ServerContext& ctx, const std::string& key, const std::string& name) {
  std::function<Result<RemoteObjectAttrs>()> head = [&tier = ctx.remote, key, name] {
    return tier.Head(key, name);
  };
  auto attrs = co_await Offload<RemoteObjectAttrs>(ctx.remote.pool(), std::move(head));
  if (!attrs.ok()) co_return attrs.status();
  ObjectMeta m = CacheTier::MetaFrom(name, *attrs);
  if (!attrs->content_type.empty()) {  // HEAD only, as AIS (not kept with the object)
    m.custom.emplace_back("Content-Type", attrs->content_type);
    std::sort(m.custom.begin(), m.custom.end());
  }
  m.cksum_value = attrs->md5;
  if (!m.cksum_value.empty()) m.cksum_type = "md5";
  co_return m;
}

Task<Status> CheckLatest(ServerContext& ctx, const std::string& key, const ObjectMeta& cached) {
  auto same = co_await SameAsRemote(ctx, key, cached);
  if (!same.ok()) {
    if (same.status().IsNotFound()) co_return Status::Gone(ObjectCname(key, cached.name) + " was deleted remotely");
    co_return same.status();
  }
  if (!*same) co_return Status::Conflict("metadata mismatch: " + ObjectCname(key, cached.name) + " changed remotely");
  co_return Status::OK();
}

namespace {

// One object S3 listed, as list-objects gives it: S3's entry alone (`remote_only`), or merged
// with its cached copy (flag kEntryIsCached). False when `not_cached` leaves it out.
Result<bool> AddObjectEntry(Store& store, const std::string& key, const RemotePageQuery& q, const RemoteListEntry& e,
                            ListPage* out) {
  if (q.remote_only && !q.not_cached) {
    out->entries.push_back(FromRemoteEntry(e));
    out->extra_flags.push_back(0);
    return true;
  }
  auto local = store.Head(key, e.name);
  if (local.ok()) {
    if (q.not_cached) return false;
    ObjectMeta m = std::move(*local);
    if (m.custom.empty()) m.custom = FromRemoteEntry(e).custom;
    out->entries.push_back(std::move(m));
    out->extra_flags.push_back(kEntryIsCached);  // the encoder adds what a stored object shows
    return true;
  }
  if (!local.status().IsNotFound()) return local.status();
  out->entries.push_back(FromRemoteEntry(e));
  out->extra_flags.push_back(0);
  return true;
}

// An LsNoRecursion page of a remote bucket, by the rules an ais:// bucket's follows
// (ListNoRecursion: a prefix without its '/' walked into, directories in name order among the
// objects, `no_dirs` leaving them out): the same tree lists the same in both. S3 is listed
// without a delimiter, from `start-after` = the cursor, each directory skipped at once. The
// continuation token is a name, as on ais://, not S3's.
Result<ListPage> ListRemoteNoRecursion(CacheTier& tier, Store& store, const std::string& key, const RemotePageQuery& q) {
  // Past every key under a directory: ListNoRecursion's cursor ends in bytes no UTF-8 key has,
  // which S3 would refuse; U+10FFFF sorts after every character a key may hold.
  constexpr std::string_view kPast = "\xff\xff\xff\xff";
  constexpr std::string_view kPastUtf8 = "\xf4\x8f\xbf\xbf";
  std::map<std::string, RemoteListEntry> seen;  // the objects of the page, by name
  ListFetch fetch = [&](const std::string& after, size_t limit) -> Result<std::vector<ListEntry>> {
    std::string start_after = after;
    if (start_after.ends_with(kPast)) start_after.replace(start_after.size() - kPast.size(), kPast.size(), kPastUtf8);
    auto listed = tier.List(key, q.prefix, "", static_cast<uint32_t>(limit), false, start_after);
    if (!listed.ok()) return listed.status();
    std::vector<ListEntry> out;
    for (auto& e : listed->entries) {
      ListEntry le;
      le.meta.name = e.name;
      seen[e.name] = std::move(e);
      out.push_back(std::move(le));
    }
    return out;
  };
  const std::string after = q.token.empty() ? q.start_after : q.token;
  auto listed = ListNoRecursion(q.prefix, after, q.max_keys, q.no_dirs, fetch);
  if (!listed.ok()) return listed.status();
  ListPage out;
  out.remote = true;
  if (listed->size() == q.max_keys) out.continuation_token = listed->back().meta.name;
  for (auto& e : *listed) {
    if (e.flags & kEntryIsDir) {
      out.entries.push_back(std::move(e.meta));
      out.extra_flags.push_back(kEntryIsDir);
      continue;
    }
    auto it = seen.find(e.meta.name);
    if (it == seen.end()) continue;  // (every object entry was fetched on this page)
    auto added = AddObjectEntry(store, key, q, it->second, &out);
    if (!added.ok()) return added.status();
  }
  return out;
}

}  // namespace

Result<ListPage> ListRemotePage(CacheTier& tier, Store& store, const std::string& key, const RemotePageQuery& q) {
  if (q.no_recursion) return ListRemoteNoRecursion(tier, store, key, q);
  auto listed = tier.List(key, q.prefix, q.token, q.max_keys, q.delimited, q.start_after);
  if (!listed.ok()) return listed.status();
  ListPage out;
  out.remote = true;
  out.continuation_token = listed->next_token;
  for (auto& e : listed->entries) {
    if (e.is_dir || (e.size == 0 && e.name.ends_with('/'))) {  // a directory, or its placeholder
      if (q.no_dirs || !e.is_dir) continue;
      ObjectMeta d;
      d.name = e.name;
      out.entries.push_back(std::move(d));
      out.extra_flags.push_back(kEntryIsDir);
      continue;
    }
    auto added = AddObjectEntry(store, key, q, e, &out);
    if (!added.ok()) return added.status();
  }
  return out;
}

Task<Handled> ListRemoteObjects(ServerContext& ctx, Exchange& ex, const std::string& key, const ListObjectsMsg& msg,
                                const ListProps& props, uint64_t page_size) {
  // start_after goes to S3 (ListObjectsV2 `start-after`); AIS 5.0 refuses it for remote buckets,
  // but it means the same there as on ais://, and the cached-only listing (the ais way) honours it.
  const RemotePageQuery q{.prefix = msg.prefix,
                          .token = msg.continuation_token,
                          .start_after = msg.start_after,
                          .max_keys = static_cast<uint32_t>(std::min<uint64_t>(page_size, kMaxRemotePage)),
                          .remote_only = msg.props.empty() || (msg.flags & (kLsNameOnly | kLsNameSize)),
                          .not_cached = (msg.flags & kLsNotCached) != 0,
                          .no_recursion = (msg.flags & kLsNoRecursion) != 0,
                          .no_dirs = (msg.flags & kLsNoDirs) != 0};
  std::function<Result<ListPage>()> list = [&tier = ctx.remote, &store = ctx.store, key, q] {
    return ListRemotePage(tier, store, key, q);
  };
  auto page = co_await Offload<ListPage>(ctx.remote.pool(), std::move(list));
  if (!page.ok()) co_return page.status();
  page->uuid = msg.uuid.empty() ? RandomId(10) : msg.uuid;
  std::string location = "t[" + ctx.node.daemon_id + "]";
  if (ex.header("Accept").find("application/msgpack") != std::string_view::npos) {
    co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageMsgpack(*page, props, location),
                                "application/msgpack");
  }
  co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageJson(*page, props, location), "application/json");
}

Task<Status> WriteThrough(ServerContext& ctx, const std::string& key, const std::string& name, ObjectWriter& w) {
  std::vector<UniqueFd> fds;
  std::vector<FileSegment> segs;
  if (Status st = w.OpenWritten(&fds, &segs); !st.ok()) co_return st;
  const uint64_t size = w.written();
  // The upload owns the fds its segments read: they outlive this frame if the server stops.
  auto owned = std::make_shared<std::vector<UniqueFd>>(std::move(fds));
  using Custom = std::vector<std::pair<std::string, std::string>>;
  std::function<Result<Custom>()> upload = [through = ctx.remote.UploadThrough(key, name), segs, size, owned] {
    return through(segs, size);
  };
  auto md = co_await Offload<Custom>(ctx.remote.pool(), std::move(upload));
  if (!md.ok()) co_return md.status();
  w.MergeCustom(*md);
  co_return Status::OK();
}

Task<Status> DeleteThrough(ServerContext& ctx, const std::string& key, const std::string& name) {
  std::function<Status()> remove = [&tier = ctx.remote, key, name] {
    return tier.DeleteRemote(key, name);
  };
  Status remote = co_await OffloadStatus(ctx.remote.pool(), std::move(remove));
  // GCS answers 404 for an object it does not have (S3 answers OK): a cached copy of it is
  // still deleted; the 404 stands only when neither had it.
  const bool remote_missing = remote.code() == Status::Code::kNotFound;
  if (!remote.ok() && !remote_missing) co_return remote;
  Status st = ctx.store.Delete(key, name);
  if (st.IsNotFound()) co_return remote;  // not cached: deleting it remotely was all
  co_return st;
}

}  // namespace ais
