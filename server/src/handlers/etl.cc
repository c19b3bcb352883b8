// /v1/etl (spec etl.md §2) over the ETL manager, and the transforming GET (§4).
#include "handlers/etl.h"

#include <memory>
#include <mutex>

#include "etl/etl_manager.h"
#include "etl/transform.h"
#include "handlers/batch_stream.h"
#include "handlers/handlers.h"
#include "handlers/node_actions.h"
#include "service/context.h"
#include "service/offload.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/base64.h"
#include "util/strings.h"

namespace ais {

namespace {

// The path's ETL name, checked as AIS checks it (start, stop, delete, details).
Result<std::string> EtlNameOf(const ApiCall& call) {
  AIS_RETURN_IF_ERROR(etl::CheckEtlName(call.route.bucket));
  return call.route.bucket;
}

// The running ETLs a request names: `etl_name`, then each of `etl_pipeline` (comma-separated).
struct Chain {
  std::shared_ptr<etl::RunningEtl> first;
  std::vector<std::string> next_urls;  // the pipeline's transformers, as Ais-Node-Url lists them
};

Result<Chain> ChainOf(ServerContext& ctx, const Exchange& ex, const std::string& etl_name) {
  Chain c;
  auto first = ctx.etl->Find(etl_name);
  if (!first.ok()) return first.status();
  c.first = std::move(*first);
  const std::string names = ex.query("etl_pipeline").value_or("");  // (Split's views point into it)
  for (std::string_view n : Split(names, ',')) {
    if (n.empty()) continue;
    auto next = ctx.etl->Find(std::string(n));
    if (!next.ok()) return next.status();
    c.next_urls.push_back((*next)->client.base_url());
  }
  if (!c.next_urls.empty() && c.first->spec.comm == etl::CommType::kHpull) {
    return Status::InvalidArgument("inline transform pipeline not supported for hpull://");
  }
  return c;
}

// An inline GET of an hpush ETL whose object is at most this size is transformed by the
// connection's own coroutine: the object read in place (as a GET of one this small is), sent to
// the transformer and its reply relayed (TransformerConnections). Larger ones, and hpull and ws
// ETLs, go through a producer thread (ReplyProduced) and TransformerClient.
constexpr uint64_t kInPlaceObjectMax = 64 << 10;
// A reply up to this size is read whole and sent in one write; a larger one is streamed.
constexpr uint64_t kWholeReplyMax = 1 << 20;
constexpr size_t kErrorBodyMax = 64 << 10;
constexpr size_t kRelayChunk = 256 << 10;

// The transform of a small object (kInPlaceObjectMax) by an hpush ETL, on this coroutine. Errors
// before the reply began are returned (and recorded); after, the reply is cut short.
Task<Handled> GetTransformedInPlace(ServerContext& ctx, Exchange& ex, const Chain& chain, const ObjectHandle& obj,
                                    const std::string& bucket, const std::string& name, const std::string& etl_name) {
  http::request<http::string_body> req;
  req.method(http::verb::put);
  req.target(etl::HpushTarget(std::string(KeyName(bucket)), name, ex.query("etl_args").value_or("")));
  if (!chain.next_urls.empty()) req.set("Ais-Node-Url", etl::NodeUrlHeader(chain.next_urls));
  std::string& data = req.body();
  data.resize(obj.size());
  SegmentReader reader(obj.Segments(0, obj.size()));
  for (size_t done = 0; done < data.size();) {
    auto n = reader.Read(data.data() + done, data.size() - done);
    if (!n.ok()) co_return n.status();
    if (*n == 0) co_return Status::IOError("object shorter than its size");
    done += *n;
  }
  req.prepare_payload();
  auto fail = [&](const Status& st) {
    ctx.etl->RecordError(etl_name, "", {ObjectCname(bucket, name), st.message(), static_cast<int>(Exchange::HttpStatusFor(st))});
    return st;
  };
  auto reply = co_await chain.first->connections.Send(req, chain.first->spec.obj_timeout);
  if (!reply.ok()) co_return fail(reply.status());
  etl::TransformerReply& r = **reply;
  if (r.status() >= 400) {
    std::string body(kErrorBodyMax, '\0');
    size_t have = 0;
    while (have < body.size()) {
      auto got = co_await r.Read(body.data() + have, body.size() - have);
      if (!got.ok() || *got == 0) break;  // the status says what failed; the body as far as it came
      have += *got;
    }
    body.resize(have);
    co_return fail(etl::TransformerError(r.status(), body));
  }
  const std::optional<uint64_t> length = r.content_length();
  if (length && *length <= kWholeReplyMax) {
    auto out = co_await r.ReadAll(*length);
    if (!out.ok()) co_return fail(out.status());
    ctx.etl->CountInline(etl_name, out->size(), false);
    co_return co_await ex.Reply(http::status::ok, {}, std::move(*out), "application/octet-stream");
  }
  StreamReply out = co_await ex.BeginStream(http::status::ok, {}, "application/octet-stream", length);
  std::vector<char> buf(kRelayChunk);
  std::vector<BodyPiece> piece(1);
  uint64_t sent = 0;
  for (;;) {
    auto got = co_await r.Read(buf.data(), buf.size());
    if (!got.ok()) {
      (void)fail(got.status());
      co_return co_await out.End(false);
    }
    if (*got == 0) break;
    sent += *got;
    piece[0] = BodyPiece{.data = buf.data(), .len = *got};
    if (!co_await out.Write(piece)) co_return co_await out.End(false);
  }
  ctx.etl->CountInline(etl_name, sent, false);
  co_return co_await out.End(true);
}

Task<Handled> ReplyText(Exchange& ex, std::string text) {
  co_return co_await ex.Reply(http::status::ok, {}, std::move(text), "text/plain");
}

}  // namespace

Task<Handled> GetTransformed(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                             const std::string& etl_name) {
  auto chain = ChainOf(ctx, ex, etl_name);
  if (!chain.ok()) co_return chain.status();
  auto obj = ctx.store.OpenShared(bucket, name);
  if (!obj.ok()) {
    if (obj.status().IsNotFound()) {
      ctx.etl->RecordError(etl_name, "", {ObjectCname(bucket, name), "object not found", 404});
    }
    co_return obj.status();
  }
  // Range is not applied: AIS transforms the whole object and returns all of its output.
  if (chain->first->spec.comm == etl::CommType::kHpush && (*obj)->size() <= kInPlaceObjectMax) {
    co_return co_await GetTransformedInPlace(ctx, ex, *chain, **obj, bucket, name, etl_name);
  }
  struct Head {
    std::mutex mu;
    std::optional<uint64_t> length;  // guarded by mu
  };
  auto head = std::make_shared<Head>();
  auto reader = std::make_shared<SegmentReader>((*obj)->Segments(0, (*obj)->size()));
  etl::TransformSource src{.provider = std::string(KeyProvider(bucket)),
                           .bucket = std::string(KeyName(bucket)),
                           .ns = KeyNs(bucket).Uname(),
                           .object = name,
                           .size = (*obj)->size(),
                           .read = [reader, keep = *obj](char* buf, size_t len) { return reader->Read(buf, len); }};
  Producer p;
  p.run = [etl = &*ctx.etl, chain = std::move(*chain), src = std::move(src), head, etl_name,
           args = ex.query("etl_args").value_or(""), cname = ObjectCname(bucket, name)](OutputSink* sink) -> Status {
    uint64_t sent = 0;
    auto status = etl::Transform(
        *chain.first, src, args, chain.next_urls,
        [&](int, std::optional<uint64_t> length) {
          std::lock_guard lock(head->mu);
          head->length = length;
          return Status::OK();
        },
        [&](const char* d, size_t n) {
          sent += n;
          return sink->Append(d, n);
        });
    if (!status.ok()) {
      etl->RecordError(etl_name, "", {cname, status.status().message(), static_cast<int>(Exchange::HttpStatusFor(status.status()))});
      return status.status();
    }
    etl->CountInline(etl_name, sent, false);
    return Status::OK();
  };
  p.describe = [head](HeaderList*, std::optional<uint64_t>* length) {
    std::lock_guard lock(head->mu);
    *length = head->length;
  };
  co_return co_await ReplyProduced(ctx.batch, ex, std::move(p), "application/octet-stream", std::nullopt);
}

Task<Handled> ListEtls(ServerContext& ctx, Exchange& ex, const ApiCall&) { co_return co_await ReplyJson(ex, ctx.etl->List()); }

Task<Handled> InitEtl(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  if (Status st = ctx.etl->CheckInitAllowed(); !st.ok()) co_return st;
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  auto spec = etl::ParseEtlSpec(*body);
  if (!spec.ok()) co_return spec.status();
  std::function<Result<std::string>()> init = [m = ctx.etl, s = std::move(*spec)] { return m->Init(s); };
  auto id = co_await Offload<std::string>(ctx.etl->pool(), std::move(init));
  if (!id.ok()) co_return id.status();
  co_return co_await ReplyText(ex, std::move(*id));
}

Task<Handled> ShowEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto name = EtlNameOf(call);
  if (!name.ok()) co_return name.status();
  auto details = ctx.etl->Details(*name, ex.query("uuid").value_or(""));
  if (!details.ok()) co_return details.status();
  co_return co_await ReplyJson(ex, *details);
}

Task<Handled> StartEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto name = EtlNameOf(call);
  if (!name.ok()) co_return name.status();
  if (Status st = ctx.etl->CheckInitAllowed(); !st.ok()) co_return st;
  std::function<Result<std::string>()> start = [m = ctx.etl, n = *name] { return m->Start(n); };
  auto id = co_await Offload<std::string>(ctx.etl->pool(), std::move(start));
  if (!id.ok()) co_return id.status();
  co_return co_await ReplyText(ex, std::move(*id));
}

Task<Handled> StopEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto name = EtlNameOf(call);
  if (!name.ok()) co_return name.status();
  std::function<Status()> stop = [m = ctx.etl, n = *name] { return m->Stop(n); };
  if (Status st = co_await OffloadStatus(ctx.etl->pool(), std::move(stop)); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> DeleteEtl(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto name = EtlNameOf(call);
  if (!name.ok()) co_return name.status();
  std::function<Status()> del = [m = ctx.etl, n = *name] { return m->Delete(n); };
  if (Status st = co_await OffloadStatus(ctx.etl->pool(), std::move(del)); !st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> EtlLogs(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto logs = ctx.etl->Logs(call.route.bucket);
  if (!logs.ok()) co_return logs.status();
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"target_id", ctx.node.daemon_id}, {"logs", EncodeBase64(*logs)}});
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> EtlHealth(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto health = ctx.etl->HealthStatus(call.route.bucket);
  if (!health.ok()) co_return health.status();
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"target_id", ctx.node.daemon_id}, {"health_status", *health}});
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> EtlMetrics(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto usage = ctx.etl->Usage(call.route.bucket);
  if (!usage.ok()) co_return usage.status();
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"target_id", ctx.node.daemon_id}, {"cpu", usage->cpu_seconds}, {"mem", usage->rss_bytes}});
  co_return co_await ReplyJson(ex, out);
}

Task<Handled> EtlOther(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& rest = call.route.object;
  if (rest.starts_with("logs/")) {
    std::string target = rest.substr(5);
    if (target != ctx.node.daemon_id) co_return Status::InvalidArgument("unknown target \"" + target.substr(0, 64) + "\"");
    co_return co_await EtlLogs(ctx, ex, call);
  }
  co_return Status::InvalidArgument("invalid URL path /v1/etl/" + call.route.bucket + "/" + rest.substr(0, 64));
}

Task<Handled> EtlObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  // <etl>/<secret>/<provider>/@#/<bucket>/<object>: the uname was one escaped segment.
  const std::string& rest = call.route.object;
  const auto first = rest.find('/');
  const auto second = first == std::string::npos ? first : rest.find('/', first + 1);
  if (second == std::string::npos) co_return Status::InvalidArgument("unrecognized request source");
  const std::string etl_name = rest.substr(0, first), secret = rest.substr(first + 1, second - first - 1);
  if (!ctx.etl->CheckSecret(etl_name, secret)) co_return Status::InvalidArgument("unrecognized request source");
  // "<provider>/<ns uname>/<bucket>/<object>" (Transform's Uname: a remote cluster's bucket by UUID)
  const std::string uname = rest.substr(second + 1);
  const auto p = uname.find('/');
  const auto n = p == std::string::npos ? p : uname.find('/', p + 1);
  const auto b = n == std::string::npos ? n : uname.find('/', n + 1);
  if (b == std::string::npos || b + 1 >= uname.size() || uname[p + 1] != '@') {
    co_return Status::InvalidArgument("invalid object uname \"" + uname.substr(0, 256) + "\" (expecting provider/@#/bucket/object)");
  }
  auto provider = NormalizeProvider(uname.substr(0, p));
  if (!provider.ok()) co_return provider.status();
  auto ns = ParseNamespace(uname.substr(p + 1, n - p - 1));
  if (!ns.ok()) co_return ns.status();
  const std::string key = BucketKey(*provider, *ns, uname.substr(n + 1, b - n - 1));
  const std::string object = uname.substr(b + 1);
  if (auto bck = ctx.store.GetBucket(key); !bck.ok()) co_return bck.status();
  if (ex.method() == http::verb::head) {
    auto meta = ctx.store.Head(key, object);
    if (!meta.ok()) co_return meta.status();
    co_return co_await ex.ReplyHeaders(http::status::ok, {}, meta->size);
  }
  co_return co_await ReadObject(ctx, ex, key, object);
}

}  // namespace ais
