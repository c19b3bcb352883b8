// ListObjects V1 and V2 (one handler): pages of the store's ordered listing (Store::List), keys
// grouped into CommonPrefixes by s3/list_params.h, max-keys honoured with IsTruncated and the
// V2 NextContinuationToken / V1 NextMarker.
#include "service/offload.h"
#include "service/remote.h"
#include "s3/list_params.h"
#include "s3/object_attrs.h"
#include "s3/request.h"
#include "s3/xml.h"
#include "store/bck.h"
#include "store/names.h"

namespace ais::s3 {
namespace {

// The prefix the store can walk for `prefix`: itself when it is a valid name prefix, else the
// directory part of it (GroupPage then filters on the whole prefix).
std::string StorePrefix(const std::string& prefix) {
  if (ValidatePrefix(prefix).ok()) return prefix;
  auto slash = prefix.rfind('/');
  if (slash == std::string::npos) return "";
  std::string dir = prefix.substr(0, slash + 1);
  return ValidatePrefix(dir).ok() ? dir : "";
}

// A remote bucket's page from S3 (merged with what is cached): V2-style tokens only, "/" only.
Task<Result<ListedPage>> RemotePage(Request& r, const ListParams& p, std::string* next_token) {
  if (!p.delimiter.empty() && p.delimiter != "/") {
    co_return r.Fail("NotImplemented", Status::NotSupported("delimiter other than \"/\" on " + BucketCname(r.bucket)));
  }
  if (p.v2 && !p.start_after.empty() && p.continuation_token.empty()) {
    co_return r.Fail("NotImplemented", Status::NotSupported("start-after/marker on " + BucketCname(r.bucket)));
  }
  RemotePageQuery q{.prefix = p.prefix,
                    .token = p.after,
                    .max_keys = static_cast<uint32_t>(std::clamp<uint64_t>(p.max_keys, 1, kMaxRemotePage)),
                    .delimited = !p.delimiter.empty()};
  std::function<Result<ais::ListPage>()> call = [&tier = r.ctx.remote, &store = r.ctx.store, key = r.bucket, q] {
    return ListRemotePage(tier, store, key, q);
  };
  auto page = co_await Offload<ais::ListPage>(r.ctx.remote.pool(), std::move(call));
  if (!page.ok()) co_return page.status();
  ListedPage out;
  for (size_t i = 0; i < page->entries.size(); ++i) {
    const uint16_t flags = i < page->extra_flags.size() ? page->extra_flags[i] : 0;
    if (flags & kEntryIsDir) out.prefixes.push_back(std::move(page->entries[i].name));
    else out.objects.push_back(std::move(page->entries[i]));
  }
  out.truncated = !page->continuation_token.empty();
  *next_token = page->continuation_token;
  co_return out;
}

}  // namespace

Task<Handled> ListObjects(Request& r) {
  std::function<std::optional<std::string>(std::string_view)> query = [&ex = r.ex](std::string_view k) { return ex.query(k); };
  auto params = ParseListParams(query, r.ctx.max_page_size);
  if (!params.ok()) co_return params.status();
  const ListParams& p = *params;
  Result<ListedPage> page = ListedPage{};
  std::string remote_token;
  if (IsRemoteKey(r.bucket)) {
    page = co_await RemotePage(r, p, &remote_token);
  } else {
    const std::string store_prefix = StorePrefix(p.prefix);
    Store& store = r.ctx.store;
    const std::string& bucket = r.bucket;
    NameFetch fetch = [&](const std::string& after, size_t limit) {
      return store.List(bucket, ListQuery{.prefix = store_prefix, .after = after, .limit = limit});
    };
    page = GroupPage(p.prefix, p.delimiter, p.after, p.max_keys, fetch);
  }
  if (!page.ok()) co_return page.status();
  ListResult res;
  res.v2 = p.v2;
  res.url_encoding = p.url_encoding;
  res.fetch_owner = p.fetch_owner;
  res.bucket = r.bucket_name;
  res.prefix = p.prefix;
  res.delimiter = p.delimiter;
  res.max_keys = p.max_keys;
  res.truncated = page->truncated;
  res.continuation_token = p.continuation_token;
  res.start_after = p.start_after;
  res.marker = p.marker;
  if (page->truncated) {
    // A remote bucket's page ends where S3's does: its token, wrapped as ours.
    const std::string& resume = IsRemoteKey(r.bucket) ? remote_token : page->last;
    if (p.v2) res.next_continuation_token = EncodeContinuationToken(resume);
    else res.next_marker = resume;
  }
  res.objects.reserve(page->objects.size());
  for (ObjectMeta& m : page->objects) {
    std::string etag = QuotedEtag(m);
    res.objects.push_back(ListedObject{.key = std::move(m.name), .last_modified_ns = m.atime_ns, .etag = std::move(etag), .size = m.size});
  }
  res.common_prefixes = std::move(page->prefixes);
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  std::string body = ListResultXml(res);
  co_return co_await r.ex.Reply(http::status::ok, headers, std::move(body), "application/xml");
}

}  // namespace ais::s3
