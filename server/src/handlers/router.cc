#include <algorithm>
#include <cctype>

#include "api/moss_request.h"
#include "handlers/context.h"
#include "handlers/node_actions.h"
#include "s3/s3.h"
#include "util/log_ring.h"
#include "util/node_stats.h"
#include "util/strings.h"

namespace ais {

Task<Result<nlohmann::json>> ReadJsonBody(Exchange& ex) {
  auto body = co_await ex.ReadBody(DefaultJsonLimits().max_body);
  if (!body.ok()) co_return body.status();
  co_return ParseJson(*body);
}

Task<Result<ActionMsg>> ReadActionMsg(Exchange& ex) {
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  co_return ActionMsg::Decode(*body);
}

Status CheckNamespace(const Exchange& ex) {
  auto ns = ex.query("namespace");
  if (!ns || ns->empty() || *ns == "@#") return Status::OK();
  // AIS syntax: "#name" (a namespace of this cluster) or "@uuid#name" (of a remote cluster).
  auto sep = ns->find('#');
  auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  bool valid = (ns->front() == '@' || ns->front() == '#') && sep != std::string::npos &&
               std::all_of(ns->begin() + 1, ns->end(), [&](char c) { return c == '#' || ok_char(c); }) &&
               ns->find('#', sep + 1) == std::string::npos;
  if (!valid) {
    return Status::InvalidArgument("invalid namespace \"" + ns->substr(0, 64) + "\" (expecting @uuid#name or #name)");
  }
  return Status::NotSupported("bucket namespaces are not supported by this server");
}

Status CheckProvider(const Exchange& ex) {
  auto provider = NormalizeProvider(ex.query("provider").value_or(""));
  if (!provider.ok()) return provider.status();
  if (*provider != "ais") {
    return Status::NotSupported("provider \"" + *provider +
                                "\" is not served by this single-node server (only \"ais\")");
  }
  return CheckNamespace(ex);
}

namespace {

Task<Handled> Fail(Status st) { co_return st; }

// The handler of `route`. Not a coroutine, so a request pays for no frame of its own here.
// REQUIRES: `parsed` outlives the task.
Task<Handled> Serve(ServerContext& ctx, Exchange& ex, const Result<Route>& parsed) {
  if (!parsed.ok()) return Fail(parsed.status());
  const Route& route = parsed.value();
  if (route.area == "health") return HandleHealth(ctx, ex);
  if (route.area == "daemon" || route.area == "cluster") return HandleCluster(ctx, ex, route);
  if (route.area == "buckets") return HandleBuckets(ctx, ex, route);
  if (route.area == "objects") {
    NodeStats& st = ServerStats();
    switch (ex.method()) {
      case http::verb::get: st.get_n.fetch_add(1, std::memory_order_relaxed); break;
      case http::verb::head: st.head_n.fetch_add(1, std::memory_order_relaxed); break;
      case http::verb::delete_: st.del_n.fetch_add(1, std::memory_order_relaxed); break;
      case http::verb::put:
        st.put_n.fetch_add(1, std::memory_order_relaxed);
        st.put_size.fetch_add(static_cast<int64_t>(ex.content_length().value_or(0)), std::memory_order_relaxed);
        break;
      default: break;
    }
    return HandleObjects(ctx, ex, route);
  }
  if (route.area == "ml") return HandleMl(ctx, ex, route);
  if (route.area == "reverse") return HandleReverse(ctx, ex, route);
  if (route.area == "download" || route.area == "sort") return HandleJobLists(ctx, ex, route);
  return Fail(Status::NotFound("invalid URL path \"" + std::string(ex.raw_path()) + "\""));
}

}  // namespace

// The one error path: a handler that did not reply returns the Status, replied here.
Task<void> Dispatch(ServerContext& ctx, Exchange& ex) {
  if (auto s3_path = s3::S3PathOf(ctx, ex.raw_path())) {  // the S3 front end replies its own way
    co_await s3::Serve(ctx, ex, *s3_path);
    co_return;
  }
  const Result<Route> route = ParseRoute(ex.raw_path());
  Handled h = co_await Serve(ctx, ex, route);
  if (h.replied()) co_return;
  if (ex.replied()) {  // a bug: an error after a reply began (Handled's contract forbids it)
    LogError(std::string(ex.raw_path()) + ": error after the reply began: " + h.status().message());
    co_return;
  }
  co_await ex.ReplyError(h.status());
}

}  // namespace ais
