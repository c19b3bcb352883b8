// /v1/download: download jobs (download/downloader.h). The bucket a job writes into is named in
// its body, not the path, so access is checked here, on that bucket (AIS: read-write, and
// CREATE-BUCKET where the job would create an ais:// bucket); abort and remove check the job's
// bucket the same way.
#include "api/moss_request.h"  // NormalizeProvider
#include "download/downloader.h"
#include "handlers/handlers.h"
#include "service/access.h"
#include "service/context.h"
#include "service/remote.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/json_text.h"
#include "util/log_ring.h"

namespace ais {
namespace {

Result<Downloader*> DownloaderOf(ServerContext& ctx) {
  if (ctx.download == nullptr) return Status::Unavailable("download jobs are not available on this server");
  return ctx.download;
}

// The job an abort or remove names, after the check of the caller's rights on its bucket.
Task<Result<std::string>> AdminTarget(ServerContext& ctx, Exchange& ex) {
  auto dl = DownloaderOf(ctx);
  if (!dl.ok()) co_return dl.status();
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto req = ParseAdminRequest(*body, true);
  if (!req.ok()) co_return req.status();
  auto bucket = (*dl)->BucketOf(req->id);
  if (!bucket.ok()) co_return bucket.status();
  if (Status st = AuthorizeBucket(ctx, ex, *bucket, auth::kAccessRW); !st.ok()) co_return st;
  co_return req->id;
}

}  // namespace

Task<Handled> StartDownload(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto dl = DownloaderOf(ctx);
  if (!dl.ok()) co_return dl.status();
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto req = ParseDownloadRequest(*body);
  if (!req.ok()) co_return req.status();
  // Access first, on the key the body names (a remote bucket is added to the BMD only after).
  auto provider = NormalizeProvider(req->provider);
  if (!provider.ok()) co_return provider.status();
  if (Status st = ValidateBucketName(req->bucket); !st.ok()) co_return st;
  const bool remote = *provider != kProviderAis;
  const std::string named = BucketKey(*provider, req->bucket);
  const bool exists = ctx.store.GetBucket(named).ok();
  const auth::AccessAttrs bits = exists || remote ? auth::kAccessRW : auth::kAccessRW | auth::kCreateBucket;
  if (Status st = AuthorizeBucket(ctx, ex, named, bits); !st.ok()) co_return st;
  auto key = co_await ResolveBucketOf(ctx, *provider, req->bucket);
  if (!key.ok()) co_return key.status();
  if (req->type == DownloadType::kBackend && !remote) {
    co_return Status::InvalidArgument("bucket download requires a remote bucket (" + BucketCname(*key) + " is not)");
  }
  if (req->from_remote && !remote) {
    co_return Status::InvalidArgument("'from_remote' requires a remote bucket (" + BucketCname(*key) + " is not)");
  }
  if (!exists && !remote) {  // AIS creates a missing ais:// bucket with the defaults (ResolveBucketOf added a remote one)
    Status st = ctx.store.CreateBucket(*key, nlohmann::json::object());
    if (!st.ok() && st.code() != Status::Code::kAlreadyExists) co_return st;
    if (st.ok()) LogInfo("download: created bucket " + BucketCname(*key));
  }
  auto id = (*dl)->Start(std::move(*req), *key);
  if (!id.ok()) co_return id.status();
  nlohmann::json reply = {{"id", *id}};
  co_return co_await ex.Reply(http::status::ok, {}, JsonText(reply), "application/json");
}

Task<Handled> GetDownloads(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto dl = DownloaderOf(ctx);
  if (!dl.ok()) co_return dl.status();
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto req = ParseAdminRequest(*body, false);
  if (!req.ok()) co_return req.status();
  std::string text;
  if (!req->id.empty()) {
    auto status = (*dl)->Status(req->id, req->only_active);
    if (!status.ok()) co_return status.status();
    text = JsonText(*status);
  } else {
    text = JsonText((*dl)->List(req->regex, req->only_active));
  }
  co_return co_await ex.Reply(http::status::ok, {}, std::move(text), "application/json");
}

Task<Handled> AbortDownload(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto id = co_await AdminTarget(ctx, ex);
  if (!id.ok()) co_return id.status();
  if (Status st = ctx.download->Abort(*id); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> RemoveDownload(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  auto id = co_await AdminTarget(ctx, ex);
  if (!id.ok()) co_return id.status();
  if (Status st = ctx.download->Remove(*id); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

}  // namespace ais
