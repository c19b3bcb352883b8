// /v1/ml/moss[/<bucket>]: GetBatch (getbatch.md): many objects and archived files in one
// ordered archive, streamed (strm) or as multipart with per-item metadata first.
#include "api/moss_request.h"
#include "archive/archive_format.h"
#include "service/access.h"
#include "handlers/batch_stream.h"
#include "handlers/handlers.h"
#include "service/context.h"
#include "service/offload.h"
#include "remote/cache_tier.h"
#include "store/bck.h"
#include "store/names.h"

namespace ais {
namespace {

// The bucket given by the path, with the query's provider and namespace.
Result<std::optional<MossBucket>> PathBucket(const Exchange& ex, const Route& route) {
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  if (!provider.ok()) return provider.status();
  auto ns = NamespaceOf(ex);
  if (!ns.ok()) return ns.status();
  if (!ns->global()) return Status::NotSupported("GetBatch: bucket namespaces are not supported (" + ns->Uname() + ")");
  if (route.object.empty()) return std::optional<MossBucket>();
  AIS_RETURN_IF_ERROR(ValidateBucketName(route.object));
  return std::optional<MossBucket>(MossBucket{.provider = *provider, .name = route.object});
}

Status CheckColoc(const Exchange& ex) {
  auto coloc = ex.query("coloc");
  if (!coloc || coloc->empty()) return Status::OK();
  if (*coloc != "0" && *coloc != "1" && *coloc != "2") {
    return Status::InvalidArgument("invalid coloc \"" + *coloc + "\" (expecting 0, 1 or 2)");
  }
  return Status::OK();
}

// Every bucket the batch names must exist: an ais bucket already, a remote one in its backend
// (added on first use, as any request adds it).
// The token must grant GET on it, too (checked first: a 403 tells nothing of the bucket).
Task<Status> CheckBucket(ServerContext& ctx, const Exchange& ex, const MossBucket& b) {
  const auth::BucketRef ref{.name = b.name, .provider = b.provider};
  if (Status st = Authorize(ctx, ex, auth::kGet, &ref); !st.ok()) co_return st;
  if (IsServedCloud(b.provider)) {
    std::string key = BucketKey(b.provider, b.name);
    if (ctx.store.buckets().Get(key)) co_return Status::OK();
    std::function<Status()> add = [&tier = ctx.remote, key] { return tier.AddBucket(key); };
    co_return co_await OffloadStatus(ctx.remote.pool(), std::move(add));
  }
  if (b.provider != kProviderAis) co_return Status::BucketNotFound("bucket \"" + b.Cname() + "\" does not exist");
  auto props = ctx.store.GetBucket(b.name);
  co_return props.ok() ? Status::OK() : props.status();
}

}  // namespace

Task<Handled> GetBatch(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (call.route.object.find('/') != std::string::npos) {
    co_return Status::InvalidArgument("invalid URL path \"" + std::string(ex.raw_path()) + "\"");
  }
  auto def = PathBucket(ex, call.route);
  if (!def.ok()) co_return def.status();
  if (Status st = CheckColoc(ex); !st.ok()) co_return st;
  // The path's bucket is checked before the body is read (the body's own buckets after it).
  if (*def) {
    if (Status st = co_await CheckBucket(ctx, ex, **def); !st.ok()) co_return st;
  }
  // The body is held whole while it is parsed: its memory is reserved first, the declared length
  // (or, chunked, as much as it may grow to).
  const BatchConfig& cfg = ctx.batch.config();
  const uint64_t declared = ex.content_length().value_or(cfg.max_body);
  if (declared > cfg.max_body) {
    co_return Status::InvalidArgument("GetBatch request body of " + std::to_string(declared) +
                                      " bytes exceeds the maximum of " + std::to_string(cfg.max_body));
  }
  auto lease = ctx.batch.body_budget().TryReserve(declared);
  if (!lease) {
    co_return Status::TooManyRequests("too many GetBatch request bodies in memory at once (" +
                                      std::to_string(cfg.max_bodies_in_memory >> 20) + " MiB), retry later");
  }
  auto body = co_await ex.ReadBody(cfg.max_body);
  if (!body.ok()) co_return body.status();
  auto req = ParseMossRequest(*body, *def, ctx.batch.config().max_items);
  body->clear();
  body->shrink_to_fit();
  if (!req.ok()) co_return req.status();
  auto format = ParseArchiveMime(req->mime);
  if (!format.ok()) co_return format.status();
  for (const auto& b : req->buckets) {
    if (Status st = co_await CheckBucket(ctx, ex, b); !st.ok()) co_return st;
  }
  BatchOptions opts;
  // Items of remote buckets that are not cached are fetched by the fetcher threads on the way.
  opts.fetch_missing = [&tier = ctx.remote](const std::string& key, const std::string& name) {
    return tier.ColdGet(key, name).status();
  };
  bool streaming = req->strm;
  if (streaming) co_return co_await ReplyArchiveStream(ctx, ex, std::move(*req), *format, std::move(opts));
  co_return co_await ReplyArchiveMultipart(ctx, ex, std::move(*req), *format, std::move(opts));
}

}  // namespace ais
