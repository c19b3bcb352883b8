// /v1/buckets: list buckets, create/destroy/head/set-props, list objects, rechunk.
#include "api/headers.h"
#include "api/object_list.h"
#include "handlers/context.h"
#include "store/names.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr uint64_t kLsNotCached = 512;
constexpr uint64_t kLsNbi = 32768;

Task<void> ListBuckets(ServerContext& ctx, Exchange& ex) {
  if (ex.method() != http::verb::get) {
    co_return co_await ex.ReplyError(Status::MethodNotAllowed("invalid method " + std::string(ex.method_string())));
  }
  (void)co_await ex.ReadBody(kMaxJsonBody);  // {"action":"list"}; nothing in it narrows the answer
  nlohmann::json out = nlohmann::json::array();
  std::string provider = ex.query("provider").value_or("");
  if (provider.empty() || provider == "ais") {
    for (auto& name : ctx.store.buckets().Names()) {
      out.push_back({{"name", name}, {"provider", "ais"}, {"namespace", {{"uuid", ""}, {"name", ""}}}});
    }
  }
  co_return co_await ex.Reply(http::status::ok, {}, out.dump(), "application/json");
}

Task<void> ListObjects(ServerContext& ctx, Exchange& ex, const std::string& bucket, const nlohmann::json& value) {
  auto msg = ListObjectsMsg::FromJson(value);
  if (!msg.ok()) co_return co_await ex.ReplyError(msg.status());
  if (Status st = ValidatePrefix(msg->prefix); !st.ok()) co_return co_await ex.ReplyError(st);
  auto props = ListProps::Parse(msg->props);
  if (!props.ok()) co_return co_await ex.ReplyError(props.status());
  if (msg->flags & kLsNotCached) {
    co_return co_await ex.ReplyError(Status::InvalidArgument("flag \"not-cached\" is not supported for ais:// buckets"));
  }
  if (msg->flags & kLsNbi) {
    co_return co_await ex.ReplyError(Status::NotSupported("listing from a bucket inventory is not supported yet"));
  }
  uint64_t page = msg->page_size == 0 ? kMaxPageSize : std::min(msg->page_size, kMaxPageSize);
  ListQuery q{.prefix = msg->prefix,
              .after = msg->continuation_token.empty() ? msg->start_after : msg->continuation_token,
              .limit = page};
  auto entries = ctx.store.List(bucket, q);
  if (!entries.ok()) co_return co_await ex.ReplyError(entries.status());
  ListPage out;
  out.uuid = msg->uuid.empty() ? RandomId(10) : msg->uuid;
  out.entries = std::move(*entries);
  if (out.entries.size() == page) out.continuation_token = out.entries.back().name;
  std::string location = "t[" + ctx.node.daemon_id + "]";
  if (ex.header("Accept").find("application/msgpack") != std::string_view::npos) {
    co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageMsgpack(out, *props, location),
                                "application/msgpack");
  }
  co_return co_await ex.Reply(http::status::ok, {}, EncodeListPageJson(out, *props, location), "application/json");
}

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

Result<uint64_t> SizeArg(const nlohmann::json& v, const char* key, uint64_t dflt) {
  if (!v.is_object() || !v.contains(key) || v[key].is_null()) return dflt;
  const auto& x = v[key];
  if (x.is_number_unsigned()) return x.get<uint64_t>();
  if (x.is_number_integer()) return x.get<int64_t>() <= 0 ? 0 : static_cast<uint64_t>(x.get<int64_t>());
  if (x.is_string()) {
    if (auto n = ParseIecSize(x.get<std::string>())) return *n;
  }
  return Status::InvalidArgument(std::string("invalid ") + key + ": " + x.dump());
}

Task<void> StartRechunk(ServerContext& ctx, Exchange& ex, const std::string& bucket, const nlohmann::json& v) {
  auto props = ctx.store.GetBucket(bucket);
  if (!props.ok()) co_return co_await ex.ReplyError(props.status());
  auto limit = SizeArg(v, "objsize-limit", props->objsize_limit);
  auto chunk = SizeArg(v, "chunk-size", props->chunk_size);
  if (!limit.ok()) co_return co_await ex.ReplyError(limit.status());
  if (!chunk.ok()) co_return co_await ex.ReplyError(chunk.status());
  if (*chunk == 0 && *limit > 0) co_return co_await ex.ReplyError(Status::InvalidArgument("chunk size is not set"));
  if (*chunk != 0 && (*chunk < kMinChunkSize || *chunk > kMaxChunkSize)) {
    co_return co_await ex.ReplyError(Status::InvalidArgument("chunk-size must be in [1KiB, 5GiB]"));
  }
  std::string prefix = v.is_object() ? v.value("prefix", "") : "";
  if (Status st = ValidatePrefix(prefix); !st.ok()) co_return co_await ex.ReplyError(st);
  Store& store = ctx.store;
  uint64_t l = *limit, c = *chunk;
  std::string id = ctx.jobs.Start("rechunk", bucket, [&store, bucket, prefix, l, c](JobControl& jc) {
    return RunRechunk(store, jc, bucket, prefix, l, c);
  });
  co_return co_await ex.Reply(http::status::ok, {}, id, "text/plain");
}

}  // namespace

Task<void> HandleBuckets(ServerContext& ctx, Exchange& ex, const Route& route) {
  if (Status st = CheckProvider(ex); !st.ok()) co_return co_await ex.ReplyError(st);
  if (route.bucket.empty()) co_return co_await ListBuckets(ctx, ex);
  const std::string& bucket = route.bucket;
  if (Status st = ValidateBucketName(bucket); !st.ok()) co_return co_await ex.ReplyError(st);
  if (route.has_extra) {
    co_return co_await ex.ReplyError(Status::InvalidArgument("invalid URL path: unexpected segments after bucket"));
  }
  switch (ex.method()) {
    case http::verb::head: {
      auto props = ctx.store.GetBucket(bucket);
      if (!props.ok()) co_return co_await ex.ReplyError(props.status());
      HeaderList headers = {{hdr::kBucketProps, props->ToAisJson(bucket).dump()}};
      co_return co_await ex.ReplyHeaders(http::status::ok, headers, std::nullopt);
    }
    case http::verb::get: {
      auto msg = co_await ReadActionMsg(ex);
      if (!msg.ok()) co_return co_await ex.ReplyError(msg.status());
      if (msg->action.empty() || msg->action == "list") co_return co_await ListObjects(ctx, ex, bucket, msg->value);
      co_return co_await ex.ReplyError(Status::InvalidArgument("invalid action \"" + msg->action + "\""));
    }
    case http::verb::post: {
      auto msg = co_await ReadActionMsg(ex);
      if (!msg.ok()) co_return co_await ex.ReplyError(msg.status());
      if (msg->action == "create-bck") {
        Status st = ctx.store.CreateBucket(bucket, msg->value);
        if (!st.ok()) co_return co_await ex.ReplyError(st);
        co_return co_await ex.Reply(http::status::ok);
      }
      if (msg->action == "rechunk") co_return co_await StartRechunk(ctx, ex, bucket, msg->value);
      co_return co_await ex.ReplyError(Status::InvalidArgument("invalid action \"" + msg->action + "\""));
    }
    case http::verb::delete_: {
      auto msg = co_await ReadActionMsg(ex);
      if (!msg.ok()) co_return co_await ex.ReplyError(msg.status());
      if (msg->action.empty() || msg->action == "destroy-bck") {
        Status st = ctx.store.DestroyBucket(bucket);
        if (!st.ok()) co_return co_await ex.ReplyError(st);
        co_return co_await ex.Reply(http::status::ok);
      }
      co_return co_await ex.ReplyError(Status::InvalidArgument("invalid action \"" + msg->action + "\""));
    }
    case http::verb::patch: {
      auto msg = co_await ReadActionMsg(ex);
      if (!msg.ok()) co_return co_await ex.ReplyError(msg.status());
      if (msg->action != "set-bprops") {
        co_return co_await ex.ReplyError(Status::InvalidArgument("invalid action \"" + msg->action + "\""));
      }
      Status st = ctx.store.buckets().Update(bucket, msg->value);
      if (!st.ok()) co_return co_await ex.ReplyError(st);
      co_return co_await ex.Reply(http::status::ok);
    }
    default:
      co_return co_await ex.ReplyError(Status::MethodNotAllowed("invalid method " + std::string(ex.method_string())));
  }
}

}  // namespace ais
