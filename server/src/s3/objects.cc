// S3 object operations: GetObject, HeadObject, PutObject, CopyObject, DeleteObject.
// Bytes leave through the AIS GET's path (service/object_read.h, then Exchange::ReplyFile:
// sendfile); remote (s3://) buckets go through the cache tier's steps (service/remote.h).
#include "service/object_read.h"
#include "service/remote.h"
#include "s3/body.h"
#include "s3/object_attrs.h"
#include "s3/request.h"
#include "s3/xml.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

bool ChecksumMode(const Exchange& ex) { return IEquals(ex.header("x-amz-checksum-mode"), "ENABLED"); }

Task<Handled> NotModified(Request& r, const ObjectMeta& m) {
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  if (std::string etag = QuotedEtag(m); !etag.empty()) headers.emplace_back("ETag", etag);
  co_return co_await r.ex.ReplyHeaders(http::status::not_modified, headers, std::nullopt);
}

Status PreconditionFailed() {
  return Status::PreconditionFailed("at least one of the preconditions you specified did not hold");
}

// A PUT's conditions on what it replaces (S3 conditional writes): If-None-Match: * (only if
// absent) and If-Match: <etag> (only if that object is there).
Status CheckWriteConditions(Request& r) {
  std::string_view if_none = r.ex.header("If-None-Match");
  std::string_view if_match = r.ex.header("If-Match");
  if (if_none.empty() && if_match.empty()) return Status::OK();
  auto cur = r.ctx.store.Head(r.bucket, r.key);
  if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
  if (!if_none.empty() && cur.ok() && EtagListMatches(if_none, EtagOf(*cur))) return PreconditionFailed();
  if (!if_match.empty()) {
    if (!cur.ok()) return r.Fail("NoSuchKey", Status::NotFound(ObjectCname(r.bucket, r.key) + " does not exist"));
    if (!EtagListMatches(if_match, EtagOf(*cur))) return PreconditionFailed();
  }
  return Status::OK();
}

// GetObject ?partNumber=N: the bytes of part N of a multipart object (its chunk N), or of the
// whole object as part 1 when it was not uploaded in parts; a range of the object otherwise.
Result<std::string> PartRange(Request& r, size_t* parts) {
  auto n = ParseUint(r.param("partNumber"));
  if (!n || *n < 1 || *n > 10000) {
    return r.Fail("InvalidArgument", Status::InvalidArgument("part number must be an integer between 1 and 10000"));
  }
  auto m = r.ctx.store.Head(r.bucket, r.key);
  if (!m.ok()) return m.status();
  const bool multipart = m->chunked() && EtagOf(*m).find('-') != std::string::npos;
  *parts = multipart ? m->chunk_sizes.size() : 1;
  if (*n > *parts) {
    return r.Fail("InvalidPartNumber", Status::RangeNotSatisfiable("the requested part number is not satisfiable"));
  }
  uint64_t start = 0, len = m->size;
  if (multipart) {
    for (size_t i = 0; i + 1 < *n; ++i) start += m->chunk_sizes[i];
    len = m->chunk_sizes[*n - 1];
  }
  if (len == 0) return std::string();
  return "bytes=" + std::to_string(start) + "-" + std::to_string(start + len - 1);
}

}  // namespace

Result<CopySource> SplitCopySource(std::string_view src) {
  if (auto q = src.find('?'); q != std::string_view::npos) src = src.substr(0, q);
  auto decoded = PercentDecode(src, false);
  if (!decoded) return Status::InvalidArgument("x-amz-copy-source: malformed percent-encoding");
  std::string_view s = *decoded;
  if (s.starts_with('/')) s.remove_prefix(1);
  auto slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size()) {
    return Status::InvalidArgument("x-amz-copy-source must be <bucket>/<key>");
  }
  CopySource out{std::string(s.substr(0, slash)), std::string(s.substr(slash + 1))};
  AIS_RETURN_IF_ERROR(ValidateObjectName(out.key));
  return out;
}

Result<CopySource> ParseCopySource(Request& r) {
  auto src = SplitCopySource(r.ex.header("x-amz-copy-source"));
  if (!src.ok()) return r.Fail("InvalidArgument", src.status());
  return src;
}

Task<Handled> GetObject(Request& r) {
  if (IsRemoteKey(r.bucket)) {
    if (Status st = co_await EnsureCached(r.ctx, r.ex, r.bucket, r.key); !st.ok()) co_return st;
  }
  std::string_view range = r.ex.header("Range");
  // S3 ignores a Range it cannot parse (the whole object is sent); only an unsatisfiable one is 416.
  if (!range.empty() && !range.starts_with("bytes=")) range = {};
  std::string part_range;
  size_t parts = 0;
  if (r.has("partNumber")) {
    auto pr = PartRange(r, &parts);
    if (!pr.ok()) co_return pr.status();
    part_range = std::move(*pr);
    range = part_range;
  }
  Condition cond = Condition::kPass;
  std::function<Status(const ObjectMeta&)> check = [&](const ObjectMeta& m) {
    cond = CheckConditions(r.ex, m);
    return cond == Condition::kFailed ? PreconditionFailed() : Status::OK();
  };
  std::optional<uint64_t> unsatisfiable;
  auto rd = OpenObjectRead(r.ctx, r.bucket, r.key, range, &check, &unsatisfiable);
  if (!rd.ok()) {
    if (unsatisfiable) r.error_headers.emplace_back("Content-Range", "bytes */" + std::to_string(*unsatisfiable));
    co_return rd.status();
  }
  const ObjectMeta& m = rd->handle.meta();
  if (cond == Condition::kNotModified) co_return co_await NotModified(r, m);
  HeaderList headers = ObjectHeaders(m, ChecksumMode(r.ex) && !rd->ranged);
  headers.emplace_back("x-amz-request-id", r.request_id);
  headers.emplace_back("Content-Type", ContentTypeOf(m));
  if (rd->ranged) {
    headers.emplace_back("Content-Range", "bytes " + std::to_string(rd->start) + "-" +
                                              std::to_string(rd->start + rd->length - 1) + "/" + std::to_string(m.size));
  }
  if (parts) headers.emplace_back("x-amz-mp-parts-count", std::to_string(parts));
  co_return co_await r.ex.ReplyFile(rd->ranged ? http::status::partial_content : http::status::ok, headers,
                                    rd->segments, rd->length);
}

Task<Handled> HeadObject(Request& r) {
  auto meta = r.ctx.store.Head(r.bucket, r.key);
  if (!meta.ok() && meta.status().IsNotFound() && IsRemoteKey(r.bucket)) meta = co_await HeadRemote(r.ctx, r.bucket, r.key);
  if (!meta.ok()) co_return meta.status();
  const ObjectMeta& m = *meta;
  Condition cond = CheckConditions(r.ex, m);
  if (cond == Condition::kFailed) co_return PreconditionFailed();
  if (cond == Condition::kNotModified) co_return co_await NotModified(r, m);
  HeaderList headers = ObjectHeaders(m, ChecksumMode(r.ex));
  headers.emplace_back("x-amz-request-id", r.request_id);
  headers.emplace_back("Content-Type", ContentTypeOf(m));
  co_return co_await r.ex.ReplyHeaders(http::status::ok, headers, m.size);
}

Task<Handled> PutObject(Request& r) {
  if (Status st = CheckWriteConditions(r); !st.ok()) co_return st;
  auto size = BodySize(r);
  if (!size.ok()) co_return size.status();
  auto md = UserMetadata(r.ex);
  if (!md.ok()) co_return r.Fail("MetadataTooLarge", md.status());
  PutOptions opts;
  opts.size = *size;
  opts.custom = std::move(*md);
  auto w = r.ctx.store.BeginPut(r.bucket, r.key, std::move(opts));
  if (!w.ok()) co_return w.status();
  ObjectWriter& writer = **w;
  std::function<Status(const char*, size_t)> sink = [&writer](const char* p, size_t n) { return writer.Write(p, n); };
  auto got = co_await ReceiveBody(r, sink);
  if (!got.ok()) co_return got.status();  // the writer's destructor removes what it wrote
  CustomMd own = {{std::string(kEtagKey), got->md5_hex}};
  if (got->algo) {
    own.emplace_back(std::string(kChecksumKeyPrefix) + std::string(ChecksumName(*got->algo)), StoredChecksum(got->checksum));
  }
  writer.MergeCustom(own);
  // A remote bucket's object goes to the backend first (whose ETag then wins); committed here
  // only once it is there.
  Status st;
  if (IsRemoteKey(r.bucket)) st = co_await WriteThrough(r.ctx, r.bucket, r.key, writer);
  ObjectMeta meta;
  if (st.ok()) st = writer.Commit(&meta);
  if (!st.ok()) co_return st;
  HeaderList headers = {{"x-amz-request-id", r.request_id}, {"ETag", QuotedEtag(meta)}};
  if (got->algo) headers.emplace_back(std::string(kChecksumKeyPrefix) + std::string(ChecksumName(*got->algo)), got->checksum);
  if (const std::string* v = meta.custom_value("version")) headers.emplace_back("x-amz-version-id", *v);
  co_return co_await r.ex.Reply(http::status::ok, headers);
}

Task<Handled> CopyObject(Request& r) {
  auto src = ParseCopySource(r);
  if (!src.ok()) co_return src.status();
  auto src_bucket = BucketByName(r, src->bucket_name);
  if (!src_bucket.ok()) co_return src_bucket.status();
  if (IsRemoteKey(r.bucket)) {
    co_return r.Fail("NotImplemented", Status::NotSupported("CopyObject into " + BucketCname(r.bucket) + " is not supported yet"));
  }
  if (IsRemoteKey(*src_bucket)) {
    if (Status st = co_await EnsureCached(r.ctx, r.ex, *src_bucket, src->key); !st.ok()) co_return st;
  }
  auto src_meta = r.ctx.store.Head(*src_bucket, src->key);
  if (!src_meta.ok()) {
    if (src_meta.status().IsNotFound()) co_return r.Fail("NoSuchKey", src_meta.status());
    co_return src_meta.status();
  }
  if (CheckConditions(r.ex, *src_meta, /*copy_source=*/true) != Condition::kPass) co_return PreconditionFailed();
  std::string directive(r.ex.header("x-amz-metadata-directive"));
  if (directive.empty()) directive = "COPY";
  if (directive != "COPY" && directive != "REPLACE") {
    co_return r.Fail("InvalidArgument", Status::InvalidArgument("unknown x-amz-metadata-directive \"" + directive.substr(0, 32) + "\""));
  }
  const bool same = *src_bucket == r.bucket && src->key == r.key;
  if (same && directive == "COPY") {
    co_return r.Fail("InvalidRequest", Status::InvalidArgument(
                                           "this copy request is illegal because it is trying to copy an object to "
                                           "itself without changing the object's metadata"));
  }
  Status st = same ? Status::OK() : r.ctx.store.Copy(*src_bucket, src->key, r.bucket, r.key);
  if (st.ok() && directive == "REPLACE") {
    auto md = UserMetadata(r.ex);
    if (!md.ok()) co_return r.Fail("MetadataTooLarge", md.status());
    // The bytes are the source's: so are the ETag and the checksum given at its PUT.
    for (const auto& [k, v] : src_meta->custom) {
      if (k == kEtagKey || k.starts_with(kChecksumKeyPrefix)) md->emplace_back(k, v);
    }
    st = r.ctx.store.SetCustom(r.bucket, r.key, std::move(*md), /*replace=*/true);
  }
  if (!st.ok()) co_return st;
  auto dst = r.ctx.store.Head(r.bucket, r.key);
  if (!dst.ok()) co_return dst.status();
  XmlDoc doc("CopyObjectResult");
  AddText(doc.root(), "LastModified", Iso8601(dst->atime_ns));
  AddText(doc.root(), "ETag", QuotedEtag(*dst));
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  std::string body = doc.Text();
  co_return co_await r.ex.Reply(http::status::ok, headers, std::move(body), "application/xml");
}

Task<Handled> DeleteObject(Request& r) {
  Status st;
  if (IsRemoteKey(r.bucket)) {
    st = co_await DeleteThrough(r.ctx, r.bucket, r.key);
  } else {
    st = r.ctx.store.Delete(r.bucket, r.key);
  }
  // S3: deleting a key that is not there succeeds (the outcome asked for holds).
  if (!st.ok() && st.code() != Status::Code::kNotFound) co_return st;
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  co_return co_await r.ex.Reply(http::status::no_content, headers);
}

}  // namespace ais::s3
