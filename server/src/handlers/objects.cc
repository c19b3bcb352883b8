// /v1/objects: GET (whole, ranged, archived files), PUT, HEAD (v1 and v2), DELETE, multipart upload.
#include <algorithm>
#include <array>
#include <cstdio>
#include <mutex>

#include "api/byte_range.h"
#include "api/headers.h"
#include "api/moss_request.h"  // NormalizeProvider
#include "api/object_list.h"
#include "archive/file_spool.h"
#include "archive/member_select.h"
#include "store/store.h"
#include "archive/shard.h"
#include "service/access.h"
#include "handlers/batch_stream.h"
#include "handlers/bucket_actions.h"
#include "handlers/etl.h"
#include "etl/offline.h"
#include "handlers/handlers.h"
#include "service/context.h"
#include "service/offload.h"
#include "service/object_read.h"
#include "service/remote.h"
#include "jobs/bucket_jobs.h"
#include "remote/cache_tier.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/checksum.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr uint64_t kInlineExtractMax = 1 << 20;  // archived files up to this size are extracted in place

std::string Location(const ServerContext& ctx, const std::string& bucket, const std::string& name) {
  const auto& mps = ctx.store.mountpaths();
  return "t[" + ctx.node.daemon_id + "]:mp[" + mps.path(mps.PrimaryFor(bucket, name)) + "]";
}

void AddChecksum(HeaderList& h, const ObjectMeta& m) {
  if (m.cksum_type.empty() || m.cksum_value.empty()) return;
  h.emplace_back(hdr::kChecksumType, m.cksum_type);
  h.emplace_back(hdr::kChecksumValue, m.cksum_value);
}

void AddCustom(HeaderList& h, const ObjectMeta& m) {
  for (auto& [k, v] : m.custom) h.emplace_back(hdr::kCustomMd, k + "=" + v);
}

// Ais-Version: a remote object's version is the backend's (spec remote-backend §3).
std::string VersionOf(const ObjectMeta& m) {
  const std::string* remote = m.custom_value("version");
  return remote ? *remote : std::to_string(m.version);
}

// Headers every GET carries (rest-core §3/§4).
HeaderList GetHeaders(const ObjectMeta& m) {
  HeaderList h;
  AddChecksum(h, m);
  h.emplace_back(hdr::kAtime, std::to_string(m.atime_ns));
  h.emplace_back(hdr::kVersion, VersionOf(m));
  AddCustom(h, m);
  return h;
}

std::vector<std::pair<std::string, std::string>> ParseCustomHeaders(const Exchange& ex) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto line : ex.header_all(hdr::kCustomMd)) {
    for (auto kv : Split(line, ',')) {
      auto eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      out.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
  }
  return out;
}

// GET ?archpath= (one file inside a shard) or ?archregx=&archmode= (a tar of the matching files),
// getbatch.md §7. Small files are extracted here; large ones, and every multi-file read, are
// produced on a thread of their own and streamed.
Task<Handled> GetArchived(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                          std::string archpath, std::string regx, std::string mode) {
  if (!archpath.empty() && !mode.empty()) {
    co_return Status::InvalidArgument("archpath and archmode are mutually exclusive");
  }
  if (!ex.header("Range").empty()) {
    co_return Status::InvalidArgument("range-read archived content is not supported");
  }
  std::optional<ArchiveFormat> hint;
  if (auto mime = ex.query("archmime"); mime && !mime->empty()) {
    auto f = ParseArchiveMime(*mime);
    if (!f.ok()) co_return f.status();
    hint = *f;
  }
  auto obj = ctx.store.OpenShared(bucket, name);
  if (!obj.ok()) co_return obj.status();
  auto shard = Shard::Open(*obj, name, hint);
  if (!shard.ok()) co_return shard.status();
  std::string cname = ObjectCname(bucket, name);
  if (archpath.empty()) {
    auto select = MemberSelect::Make(mode, std::move(regx));
    if (!select.ok()) co_return select.status();
    Producer p;
    p.run = [sel = std::move(*select), sh = *shard, cname](OutputSink* sink) { return sel.WriteTar(*sh, sink, cname); };
    co_return co_await ReplyProduced(ctx.batch, ex, std::move(p), "application/x-tar", std::nullopt);
  }
  if (archpath.starts_with('/')) archpath.erase(0, 1);
  if (archpath.starts_with(name + "/")) archpath.erase(0, name.size() + 1);
  // Finding the member walks the archive's headers (and a small compressed member is read
  // whole): off the I/O thread.
  struct Found {
    Shard::Member member;
    std::optional<std::string> data;  // a small member that is not stored as is
  };
  std::function<Result<Found>()> find = [sh = *shard, archpath]() -> Result<Found> {
    auto m = sh->Find(archpath);
    if (!m.ok()) return m.status();
    Found f{.member = std::move(*m), .data = std::nullopt};
    if (!f.member.offset && f.member.size <= kInlineExtractMax) {
      std::string data;
      data.reserve(f.member.size);
      AIS_RETURN_IF_ERROR(sh->Read(archpath, 0, f.member.size, [&](const char* d, size_t n) {
        data.append(d, n);
        return Status::OK();
      }));
      f.data = std::move(data);
    }
    return f;
  };
  auto found = co_await Offload<Found>(ctx.remote.pool(), std::move(find));
  if (!found.ok()) {
    if (found.status().IsNotFound()) {
      co_return Status::NotFound(archpath + " in " + cname + " does not exist");
    }
    co_return found.status();
  }
  const Shard::Member* m = &found->member;
  HeaderList headers;
  if (m->offset) {  // stored as is: straight from the object's files
    std::vector<FileSegment> segs = (*obj)->Segments(*m->offset, m->size);
    co_return co_await ex.ReplyFile(http::status::ok, headers, segs, m->size);
  }
  if (found->data) {
    co_return co_await ex.Reply(http::status::ok, headers, std::move(*found->data), "application/octet-stream");
  }
  Producer p;
  p.run = [sh = *shard, archpath, size = m->size](OutputSink* sink) {
    return sh->Read(archpath, 0, size, [sink](const char* d, size_t n) { return sink->Append(d, n); });
  };
  co_return co_await ReplyProduced(ctx.batch, ex, std::move(p), "application/octet-stream", m->size);
}

// A cold GET of a whole remote object, streamed while it is written: the reply starts with the
// first bytes from S3 instead of after the last. Its headers are S3's (version, custom metadata;
// no checksum, which is known only at the end). A fetch that fails cuts the reply short, and the
// last byte goes out only once the object is committed, so a complete reply is a cached object.
// When another request's fetch serves this one, or the object is cached meanwhile, the local
// copy is sent. A blob download (Ais-Blob-Download, or Ais-Blob-Threshold and the remote size)
// streams too: its chunks go out in order as they are committed, fetched concurrently.
Task<Handled> StreamColdGet(ServerContext& ctx, Exchange& ex, const std::string& key, const std::string& name) {
  auto blob = ParseBlobRequest(ex);
  if (!blob.ok()) co_return blob.status();
  struct Head {
    std::mutex mu;
    HeaderList headers;  // guarded by mu
    std::optional<uint64_t> length;  // guarded by mu
    void Set(const ObjectMeta& m) {
      std::lock_guard lock(mu);
      headers = GetHeaders(m);
      length = m.size;
    }
  };
  auto head = std::make_shared<Head>();
  Producer p;
  p.run = [&tier = ctx.remote, &store = ctx.store, key, name, head, blob = *blob](OutputSink* sink) -> Status {
    ColdTee tee;
    tee.attrs = [&](const RemoteObjectAttrs& a) {
      ObjectMeta m = CacheTier::MetaFrom(name, a);
      m.atime_ns = NowNs();
      head->Set(m);
    };
    tee.data = [sink](const char* d, size_t n) { return sink->Append(d, n); };
    bool use_blob = blob.blob;
    if (blob.threshold) {  // the blob downloader only for an object at least this big
      auto remote = tier.Head(key, name);
      if (!remote.ok()) return remote.status();
      use_blob = remote->size >= *blob.threshold;
    }
    bool teed = false;
    auto got = tier.ColdGet(key, name, false, use_blob ? std::optional<BlobOptions>(blob.options) : std::nullopt,
                            &tee, &teed);
    if (!got.ok() || teed) return got.status();
    auto obj = store.OpenShared(key, name);
    if (!obj.ok()) return obj.status();
    head->Set((*obj)->meta());
    for (const FileSegment& seg : (*obj)->Segments(0, (*obj)->size())) AIS_RETURN_IF_ERROR(sink->AppendFile(seg, *obj));
    return Status::OK();
  };
  p.describe = [head](HeaderList* headers, std::optional<uint64_t>* length) {
    std::lock_guard lock(head->mu);
    *headers = head->headers;
    *length = head->length;
  };
  co_return co_await ReplyProduced(ctx.batch, ex, std::move(p), "application/octet-stream", std::nullopt);
}

// Whether a GET of a remote object that is not cached is a streamed cold GET: the whole object
// (no range, no archived file, no transform), blob-downloaded or not.
bool StreamsCold(const Exchange& ex) {
  for (const char* q : {"archpath", "archregx", "archmode", "etl_name"}) {
    if (!ex.query(q).value_or("").empty()) return false;
  }
  return ex.header("Range").empty();
}

}  // namespace

Task<Handled> ReadObject(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name) {
  if (std::string etl = ex.query("etl_name").value_or(""); !etl.empty()) {
    co_return co_await GetTransformed(ctx, ex, bucket, name, etl);
  }
  // The SDK always sends archpath= and archregx=, usually empty: empty means "the object itself".
  std::string archpath = ex.query("archpath").value_or("");
  std::string regx = ex.query("archregx").value_or("");
  std::string mode = ex.query("archmode").value_or("");
  if (!archpath.empty() || !regx.empty() || !mode.empty()) {
    co_return co_await GetArchived(ctx, ex, bucket, name, std::move(archpath), std::move(regx), std::move(mode));
  }
  std::string_view range_hdr = ex.header("Range");
  std::optional<uint64_t> unsatisfiable;
  auto rd = OpenObjectRead(ctx, bucket, name, range_hdr, nullptr, &unsatisfiable);
  if (!rd.ok()) {
    // AIS names the size only for well-formed but unsatisfiable ranges.
    if (unsatisfiable && range_hdr.starts_with("bytes=")) {
      ex.AddErrorHeader("Content-Range", "bytes */" + std::to_string(*unsatisfiable));
    }
    co_return rd.status();
  }
  const ObjectMeta& m = rd->handle.meta();
  HeaderList headers = GetHeaders(m);
  if (rd->ranged) {
    headers.emplace_back("Content-Range", "bytes " + std::to_string(rd->start) + "-" +
                                              std::to_string(rd->start + rd->length - 1) + "/" + std::to_string(m.size));
    headers.emplace_back("Accept-Ranges", "bytes");
  }
  co_return co_await ex.ReplyFile(rd->ranged ? http::status::partial_content : http::status::ok, headers,
                                  rd->segments, rd->length);
}

// HEAD with ?props= (v2) answers only what was asked; without it (v1) answers everything.
Task<Handled> HeadObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  auto props_q = ex.query("props");
  bool v2 = props_q && !props_q->empty();
  std::vector<std::string> want;
  if (v2) {
    static const std::vector<std::string> kKnown = {"name", "size",     "checksum", "atime",         "version",
                                                    "custom", "location", "copies",  "ec",            "chunked",
                                                    "last-modified", "etag"};
    for (auto p : Split(*props_q, ',')) {
      std::string s(p);
      if (s.empty()) continue;
      if (std::find(kKnown.begin(), kKnown.end(), s) == kKnown.end()) {
        co_return Status::InvalidArgument("invalid property \"" + s + "\" in props list");
      }
      want.push_back(std::move(s));
    }
  }
  auto has = [&](const char* p) { return !v2 || std::find(want.begin(), want.end(), p) != want.end(); };
  if (name.ends_with('/')) co_return Status::NotFound(Store::ObjNotFoundMessage(bucket, name));
  auto meta = ctx.store.Head(bucket, name);
  bool present = true;
  if (!meta.ok() && meta.status().IsNotFound() && IsRemoteKey(bucket)) {
    // Not cached: what the remote says (query presence 2..4 asks about this node only).
    auto presence = ParseUint(ex.query("presence").value_or(""));
    if (!presence || *presence < 2 || *presence > 4) {
      meta = co_await HeadRemote(ctx, bucket, name);
      present = false;
    }
  }
  if (!meta.ok()) co_return meta.status();
  if (present && IsRemoteKey(bucket) && IEquals(ex.query("latest-ver").value_or(""), "true")) {
    // The cached copy against the remote: gone there is 410, changed is 409 (AIS's HEAD rules).
    if (Status st = co_await CheckLatest(ctx, bucket, *meta); !st.ok()) co_return st;
  }
  const ObjectMeta& m = *meta;
  HeaderList h;
  if (has("checksum")) AddChecksum(h, m);
  if (has("atime")) h.emplace_back(hdr::kAtime, std::to_string(m.atime_ns));
  if (has("version")) h.emplace_back(hdr::kVersion, VersionOf(m));
  if (has("custom")) AddCustom(h, m);
  if (!v2) {
    h.emplace_back(hdr::kBucketName, std::string(KeyName(bucket)));
    h.emplace_back(hdr::kBucketProvider, std::string(KeyProvider(bucket)));
    h.emplace_back(hdr::kName, name);
  }
  // Where it is stored and in how many copies: only what is (AIS leaves both out otherwise).
  if (present && has("location")) h.emplace_back(hdr::kLocation, Location(ctx, bucket, name));
  if (present && has("copies")) {
    const std::vector<std::string> where = ctx.store.CopyLocations(bucket, name);
    h.emplace_back(hdr::kMirrorCopies, std::to_string(std::max<size_t>(where.size(), 1)));
    if (v2) {
      std::string paths;
      for (const auto& p : where) paths += (paths.empty() ? "" : ",") + p;
      h.emplace_back(hdr::kMirrorPaths, "[" + paths + "]");
    }
  }
  if (v2 && has("chunked") && m.chunked()) {
    h.emplace_back(hdr::kChunksCount, std::to_string(m.chunk_sizes.size()));
    h.emplace_back(hdr::kChunksMaxSize, std::to_string(m.max_chunk_size()));
  }
  if (v2 && has("last-modified")) {
    const std::string* remote_lm = m.custom_value("Last-Modified");
    h.emplace_back("Last-Modified", remote_lm ? *remote_lm : FormatHttpDate(m.atime_ns));
  }
  if (v2 && has("etag")) {
    const std::string* remote_etag = m.custom_value("ETag");
    std::string etag = remote_etag ? *remote_etag : "";
    if (etag.empty() && !m.cksum_value.empty()) {
      etag = m.cksum_type == "md5" && !m.chunked() ? m.cksum_value
                                                  : "v1-" + m.cksum_value + "-" + Base36(static_cast<uint64_t>(m.atime_ns));
    }
    if (!etag.empty()) h.emplace_back("ETag", "\"" + etag + "\"");
  }
  h.emplace_back(hdr::kPresent, present ? "true" : "false");
  std::optional<uint64_t> len;
  if (v2 || m.size > 0) len = m.size;
  co_return co_await ex.ReplyHeaders(http::status::ok, h, len);
}

namespace {

Task<Handled> PutPart(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                      const std::string& upload_id) {
  auto num = ParseUint(ex.query("partNumber").value_or(""));
  if (!num || *num > UINT32_MAX) {
    co_return Status::InvalidArgument("invalid part number \"" +
                                                             ex.query("partNumber").value_or("") + "\"");
  }
  auto len = ex.content_length();
  if (!len || *len == 0) {
    co_return Status::InvalidArgument(
        ObjectCname(bucket, name) + ": put-part invalid size (" + std::to_string(len.value_or(0)) +
        "): a part needs a non-empty body with Content-Length");
  }
  auto w = ctx.store.MpuPart(bucket, name, upload_id, static_cast<uint32_t>(*num), *len);
  if (!w.ok()) co_return w.status();
  Status st = co_await ex.StreamBody([&](const char* p, size_t n) { return (*w)->Write(p, n); });
  if (st.ok()) st = (*w)->Commit();
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// "ais/@#/<bucket>/<object>" or "aws/@#/<bucket>/<object>" (an object uname) -> bucket store
// key, object.
Result<std::pair<std::string, std::string>> ParseObjectUname(const std::string& uname) {
  auto bad = [&] { return Status::InvalidArgument("invalid destination \"" + uname + "\" (expecting ais/@#/BUCKET/OBJECT)"); };
  auto p1 = uname.find('/');
  if (p1 == std::string::npos) return bad();
  auto p2 = uname.find('/', p1 + 1);
  if (p2 == std::string::npos) return bad();
  auto p3 = uname.find('/', p2 + 1);
  if (p3 == std::string::npos) return bad();
  auto provider = NormalizeProvider(uname.substr(0, p1));
  auto ns = ParseNamespace(uname.substr(p1 + 1, p2 - p1 - 1));
  if (!ns.ok()) return ns.status();
  if (!provider.ok() || (*provider != kProviderAis && !IsServedCloud(*provider)) ||
      (!ns->global() && (*provider != kProviderAis || ns->remote()))) {
    return Status::NotSupported("copy destination \"" + uname +
                                "\": only ais:// (global or local namespace), s3://, gs:// and az:// buckets");
  }
  std::string bucket = uname.substr(p2 + 1, p3 - p2 - 1), object = uname.substr(p3 + 1);
  AIS_RETURN_IF_ERROR(ValidateBucketName(bucket));
  AIS_RETURN_IF_ERROR(ValidateObjectName(object));
  return std::make_pair(BucketKey(*provider, *ns, bucket), object);
}

Task<Handled> CopyObject(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                         const std::string& to) {
  auto dst = ParseObjectUname(to);
  if (!dst.ok()) co_return dst.status();
  // The route's check was PUT on the source: the copy reads it and writes the destination.
  if (Status st = AuthorizeBucket(ctx, ex, bucket, auth::kGet); !st.ok()) co_return st;
  if (Status st = AuthorizeDestination(ctx, ex, dst->first); !st.ok()) co_return st;
  if (IsRemoteKey(bucket)) {
    if (Status st = co_await EnsureCached(ctx, ex, bucket, name); !st.ok()) co_return st;
  }
  // Into a remote bucket: written through as a PUT is (the backend takes it, then the local
  // commit), after adding the bucket on first use.
  WriteThroughFn through;
  if (IsRemoteKey(dst->first)) {
    if (!ctx.store.buckets().Get(dst->first)) {
      if (Status st = ctx.remote.CheckEnabled(KeyProvider(dst->first)); !st.ok()) co_return st;
      std::function<Status()> add = [&tier = ctx.remote, key = dst->first] { return tier.AddBucket(key); };
      if (Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(add)); !st.ok()) co_return st;
    }
    through = ctx.remote.UploadThrough(dst->first, dst->second);
  }
  if (std::string etl_name = ex.query("etl_name").value_or(""); !etl_name.empty()) {
    std::vector<std::string> pipeline;
    const std::string names = ex.query("etl_pipeline").value_or("");  // (Split's views point into it)
    for (std::string_view n : Split(names, ',')) {
      if (!n.empty()) pipeline.emplace_back(n);
    }
    auto chain = etl::ResolveChain(*ctx.etl, etl_name, pipeline);
    if (!chain.ok()) co_return chain.status();
    std::function<Result<uint64_t>()> transform = [&store = ctx.store, &m = *ctx.etl, chain = std::move(*chain),
                                                   args = ex.query("etl_args").value_or(""), bucket, name,
                                                   dst = *dst, through] {
      return etl::TransformObject(store, m, chain, args, bucket, name, dst.first, dst.second, through);
    };
    auto got = co_await Offload<uint64_t>(ctx.etl->pool(), std::move(transform));
    if (!got.ok()) co_return got.status();
    co_return co_await ex.Reply(http::status::ok);
  }
  std::function<Status()> copy = [&store = ctx.store, bucket, name, dst = *dst, through] {
    return store.Copy(bucket, name, dst.first, dst.second, through);
  };
  Status st = co_await OffloadStatus(ctx.remote.pool(), std::move(copy));  // (a whole object's bytes)
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// PUT ?append_type=append|flush&append_handle=H: the object appears only at flush.
Task<Handled> AppendObject(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                           const std::string& type) {
  std::string handle = ex.query("append_handle").value_or("");
  if (type == "append") {
    Result<std::string> id = handle;
    if (handle.empty()) {  // a new append copies the object's content first: off the I/O thread
      std::function<Result<std::string>()> begin = [&store = ctx.store, bucket, name] {
        return store.Append(bucket, name, "", [](ObjectWriter&) { return Status::OK(); });
      };
      id = co_await Offload<std::string>(ctx.remote.pool(), std::move(begin));
    }
    if (!id.ok()) co_return id.status();
    // The body is streamed outside the store call (it suspends); the writer is used under the handle.
    Status st = co_await ex.StreamBody([&](const char* p, size_t n) {
      auto r = ctx.store.Append(bucket, name, *id, [&](ObjectWriter& w) { return w.Write(p, n); });
      return r.ok() ? Status::OK() : r.status();
    });
    if (!st.ok()) co_return st;
    HeaderList headers = {{"Ais-Append-Handle", *id}};
    co_return co_await ex.Reply(http::status::ok, headers);
  }
  if (type == "flush") {
    if (handle.empty()) co_return Status::InvalidArgument("flush requires append_handle");
    (void)co_await ex.ReadBody(DefaultJsonLimits().max_body);
    if (!IsRemoteKey(bucket)) {
      ObjectMeta meta;
      Status st = ctx.store.AppendFlush(bucket, name, handle, &meta);
      if (!st.ok()) co_return st;
      co_return co_await ex.Reply(http::status::ok, GetHeaders(meta));
    }
    // A remote bucket's object goes to the backend first (off the I/O thread), then commits.
    std::function<Result<ObjectMeta>()> flush = [&store = ctx.store, through = ctx.remote.UploadThrough(bucket, name),
                                                 bucket, name, handle]() -> Result<ObjectMeta> {
      ObjectMeta meta;
      AIS_RETURN_IF_ERROR(store.AppendFlush(bucket, name, handle, &meta, through));
      return meta;
    };
    auto meta = co_await Offload<ObjectMeta>(ctx.remote.pool(), std::move(flush));
    if (!meta.ok()) co_return meta.status();
    co_return co_await ex.Reply(http::status::ok, GetHeaders(*meta));
  }
  co_return Status::InvalidArgument("invalid append_type \"" + type + "\"");
}

// PUT ?archpath=: the body becomes one file of the shard `name` (`ais archive put`). Header
// Ais-Pine: absent or 0, a new shard of that file; 1, appended to the shard (404 without one);
// 2, appended, or a new shard. The body is spooled first (a member's size goes before its bytes,
// and the rest of the shard is rewritten around it off the I/O thread).
Task<Handled> PutToArchive(ServerContext& ctx, Exchange& ex, const std::string& bucket, const std::string& name,
                           std::string archpath) {
  if (IsRemoteKey(bucket)) {
    co_return Status::NotSupported("adding a file to a shard in remote bucket " + BucketCname(bucket) +
                                   " is not yet supported");
  }
  if (archpath.starts_with('/')) archpath.erase(0, 1);
  if (Status st = ValidateObjectName(archpath); !st.ok()) co_return Status::InvalidArgument("archpath: " + st.message());
  const std::optional<uint64_t> size = ex.content_length();
  if (!size || *size == 0) {
    co_return Status::InvalidArgument("adding " + archpath + " to " + ObjectCname(bucket, name) +
                                      ": a non-empty body with Content-Length is required");
  }
  ArchivePut mode = ArchivePut::kPut;
  if (std::string_view pine = ex.header("Ais-Pine"); pine == "1") {
    mode = ArchivePut::kAppend;
  } else if (pine == "2") {
    mode = ArchivePut::kAppendOrPut;
  } else if (!pine.empty() && pine != "0") {
    co_return Status::InvalidArgument("invalid Ais-Pine \"" + std::string(pine.substr(0, 16)) +
                                      "\" (expecting 0: new shard, 1: append, 2: append or put)");
  }
  std::optional<ArchiveFormat> format = FormatFromName(name);
  if (auto mime = ex.query("archmime"); mime && !mime->empty()) {
    auto f = ParseArchiveMime(*mime);
    if (!f.ok()) co_return f.status();
    format = *f;
  }
  if (!format) {
    co_return Status::InvalidArgument("cannot tell the archive format of \"" + name +
                                      "\" (name it .tar, .tgz, .tar.gz, .tar.lz4 or .zip, or give archmime)");
  }
  if (!ctx.store.GetBucket(bucket).ok()) co_return ctx.store.GetBucket(bucket).status();
  const Mountpaths& mps = ctx.store.mountpaths();
  size_t spool_mp = 0;
  while (spool_mp + 1 < mps.size() && !mps.enabled(spool_mp)) ++spool_mp;
  auto spool = FileSpool::Create(mps.WorkDir(spool_mp));
  if (!spool.ok()) co_return spool.status();
  Status st = co_await ex.StreamBody([&](const char* p, size_t n) { return (*spool)->Append(p, n); });
  if (st.ok()) st = (*spool)->Flush();
  if (!st.ok()) co_return st;
  if ((*spool)->size() != *size) co_return Status::InvalidArgument("the body is shorter than its Content-Length");
  std::function<Result<ObjectMeta>()> put = [&store = ctx.store, bucket, name, format = *format, mode, archpath,
                                            fd = (*spool)->fd(), size = *size]() -> Result<ObjectMeta> {
    ObjectMeta meta;
    AIS_RETURN_IF_ERROR(PutArchiveMember(store, bucket, name, format, mode, archpath, fd, size, &meta));
    return meta;
  };
  auto meta = co_await Offload<ObjectMeta>(ctx.remote.pool(), std::move(put));  // (the spool outlives it)
  if (!meta.ok()) co_return meta.status();
  co_return co_await ex.Reply(http::status::ok, GetHeaders(*meta));
}

}  // namespace

Task<Handled> PutObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  // append_type first: the access check took APPEND, not PUT, for a request that has it.
  if (auto at = ex.query("append_type"); at && !at->empty()) co_return co_await AppendObject(ctx, ex, bucket, name, *at);
  if (auto ap = ex.query("archpath"); ap && !ap->empty()) co_return co_await PutToArchive(ctx, ex, bucket, name, *ap);
  if (auto up = ex.query("uploadId"); up && !up->empty()) co_return co_await PutPart(ctx, ex, bucket, name, *up);
  if (auto to = ex.query("object_to"); to && !to->empty()) co_return co_await CopyObject(ctx, ex, bucket, name, *to);
  PutOptions opts;
  opts.size = ex.content_length();
  opts.custom = ParseCustomHeaders(ex);
  bool skip_vc = IEquals(ex.query("skip_vc").value_or(""), "true");
  if (!skip_vc) {
    opts.client_cksum_type = std::string(ex.header(hdr::kChecksumType));
    opts.client_cksum_value = std::string(ex.header(hdr::kChecksumValue));
  }
  if (!opts.client_cksum_value.empty()) {
    // Same content as what is stored: keep it (no new version), as AIS does.
    auto cur = ctx.store.Head(bucket, name);
    if (cur.ok() && Checksummer::SameDigest(cur->cksum_type, opts.client_cksum_type) && cur->cksum_value == opts.client_cksum_value) {
      Status st = co_await ex.StreamBody([](const char*, size_t) { return Status::OK(); });
      if (!st.ok()) co_return st;
      co_return co_await ex.Reply(http::status::ok, GetHeaders(*cur));
    }
  }
  auto w = ctx.store.BeginPut(bucket, name, std::move(opts));
  if (!w.ok()) co_return w.status();
  Status st = co_await ex.StreamBody([&](const char* p, size_t n) { return (*w)->Write(p, n); });
  // A remote bucket's object goes to the backend first: committed here only once it is there.
  if (st.ok() && IsRemoteKey(bucket)) st = co_await WriteThrough(ctx, bucket, name, **w);
  ObjectMeta meta;
  if (st.ok()) st = (*w)->Commit(&meta);
  if (!st.ok()) co_return st;  // the writer's destructor removes what it wrote
  co_return co_await ex.Reply(http::status::ok, GetHeaders(meta));
}

// rename-obj: the object under a new name in the same bucket, the old name gone. A copy then a
// delete: a crash between them leaves both names, never neither.
Task<Handled> RenameObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  const std::string& to = call.msg.name;
  if (Status st = ValidateObjectName(to); !st.ok()) co_return st;
  if (to == name) {
    co_return Status::InvalidArgument("cannot rename object \"" + name + "\" onto itself");
  }
  Status st = ctx.store.Copy(bucket, name, bucket, to);
  if (st.ok()) st = ctx.store.Delete(bucket, name);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> StartMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  auto id = ctx.store.MpuCreate(call.bucket, call.route.object, ParseCustomHeaders(ex));
  if (!id.ok()) co_return id.status();
  co_return co_await ex.Reply(http::status::ok, {}, *id, "text/plain");
}

Task<Handled> CompleteMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  const std::string upload_id = ex.query("uploadId").value_or("");
  if (upload_id.empty()) co_return Status::InvalidArgument("missing uploadId");
  auto parts = DecodeMptParts(call.msg.value, kMaxChunks);
  if (!parts.ok()) co_return parts.status();
  Status st;
  if (!IsRemoteKey(bucket)) {
    st = ctx.store.MpuComplete(bucket, name, upload_id, std::move(*parts));
  } else {
    // Parts are kept locally; the assembled object goes to the backend (itself a multipart
    // upload when large) before the local commit, off the I/O thread.
    std::function<Status()> complete = [&store = ctx.store, through = ctx.remote.UploadThrough(bucket, name),
                                        bucket, name, upload_id, parts = std::move(*parts)] {
      return store.MpuComplete(bucket, name, upload_id, parts, {}, nullptr, through);
    };
    st = co_await OffloadStatus(ctx.remote.pool(), std::move(complete));
  }
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> AbortMultipartUpload(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  const std::string upload_id = ex.query("uploadId").value_or("");
  if (upload_id.empty()) co_return Status::InvalidArgument("missing uploadId");
  Status st = ctx.store.MpuAbort(call.bucket, call.route.object, upload_id);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// 423 while a cold GET writes the object (the official SDK polls this before retrying a GET that
// timed out); 200 otherwise: readers never lock an object here.
Task<Handled> CheckObjectLock(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (Status st = call.msg.CheckNoValue(); !st.ok()) co_return st;
  if (IsRemoteKey(call.bucket) && ctx.remote.Fetching(call.bucket, call.route.object)) {
    co_return co_await ex.Reply(http::status::locked);
  }
  co_return co_await ex.Reply(http::status::ok);
}

// PATCH: merge (or with ?set-new-custom=true replace) custom metadata, value {"k": "v"}. On a
// remote bucket as AIS 5.0 does it (target httpobjpatch: lom.SetCustomKey, then lom.Persist):
// the cached copy's in-cluster metadata only, never the backend's; an object that is not cached
// is a 404. A later fetch of a changed remote object replaces it.
Task<Handled> SetObjectCustomProps(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  auto md = DecodeCustomMd(call.msg.value);
  if (!md.ok()) co_return md.status();
  size_t total = 0;
  for (const auto& [k, val] : *md) {
    total += k.size() + val.size();
    auto reserved = [](std::string_view x) {
      return x.find('\x01') != std::string_view::npos || x.find("\xe3\xbd") != std::string_view::npos;
    };
    if (reserved(k) || reserved(val)) {
      co_return Status::InvalidArgument("custom metadata contains a reserved byte sequence");
    }
  }
  if (total > 2048) {
    co_return Status::InvalidArgument("invalid \"value\": custom metadata exceeds 2 KiB");
  }
  bool replace = IEquals(ex.query("set-new-custom").value_or(""), "true");
  Status st = ctx.store.SetCustom(call.bucket, call.route.object, std::move(*md), replace);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> DeleteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  if (auto up = ex.query("uploadId"); up && !up->empty()) {
    (void)co_await ex.ReadBody(DefaultJsonLimits().max_body);  // {"action":"mpt-abort"}
    Status st = ctx.store.MpuAbort(bucket, name, *up);
    if (!st.ok()) co_return st;
    co_return co_await ex.Reply(http::status::ok);
  }
  Status st = ctx.store.Delete(bucket, name);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

// In the backend first, then the cached copy; a multipart upload's abort is local.
Task<Handled> DeleteRemoteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (!ex.query("uploadId").value_or("").empty()) co_return co_await DeleteObject(ctx, ex, call);
  Status st = co_await DeleteThrough(ctx, call.bucket, call.route.object);
  if (!st.ok()) co_return st;
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> GetObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  if (IEquals(ex.header("Ais-Blob-Download"), "true")) {
    co_return Status::InvalidArgument("blob-downloader is not supported for local buckets: " + BucketCname(call.bucket));
  }
  co_return co_await ReadObject(ctx, ex, call.bucket, call.route.object);
}

// Not cached, the whole object: streamed as it is fetched; else fetched (or checked) first.
Task<Handled> GetRemoteObject(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const std::string& name = call.route.object;
  const Result<ObjectMeta> local = ctx.store.Head(bucket, name);
  if (local.status().IsNotFound() && StreamsCold(ex)) co_return co_await StreamColdGet(ctx, ex, bucket, name);
  if (Status st = co_await EnsureCached(ctx, ex, bucket, name, &local); !st.ok()) co_return st;
  Handled read = co_await ReadObject(ctx, ex, bucket, name);
  if (read.replied() || !read.status().IsNotFound()) co_return read;
  // Evicted between the check and the open (the lru job): a cold GET again, once.
  if (Status st = co_await EnsureCached(ctx, ex, bucket, name); !st.ok()) co_return st;
  co_return co_await ReadObject(ctx, ex, bucket, name);
}

// blob-download job: the object fetched by concurrent range reads into its chunks; "" (nothing to
// do) when it is cached and `latest-ver` does not ask to check it.
Task<Handled> StartBlobDownload(ServerContext& ctx, Exchange& ex, const ApiCall& call) {
  const std::string& bucket = call.bucket;
  const ActionMsg& msg = call.msg;
  auto blob = BlobMsg::Decode(msg.value);
  if (!blob.ok()) co_return blob.status();
  const std::string name = msg.name;
  if (Status st = ValidateObjectName(name); !st.ok()) co_return st;
  auto local = ctx.store.Head(bucket, name);
  if (local.ok() && !blob->latest) co_return co_await ex.Reply(http::status::ok, {}, "", "text/plain");
  const BlobOptions opts{.chunk_size = blob->chunk_size, .workers = blob->num_workers};
  CacheTier& tier = ctx.remote;
  Store& store = ctx.store;
  std::string id = ctx.jobs.Start("blob-download", bucket, [&tier, &store, bucket, name, opts](JobControl& jc) -> Status {
    bool replace = false;
    if (auto cached = store.Head(bucket, name); cached.ok()) {  // latest-ver: fetch again only if changed
      auto same = tier.InSync(bucket, *cached);
      if (!same.ok()) return same.status();
      if (*same) return Status::OK();
      replace = true;
    }
    auto got = tier.ColdGet(bucket, name, replace, opts);
    if (!got.ok()) return got.status();
    jc.Add(1, static_cast<int64_t>(got->size));
    return Status::OK();
  });
  co_return co_await ex.Reply(http::status::ok, {}, id, "text/plain");
}

}  // namespace ais
