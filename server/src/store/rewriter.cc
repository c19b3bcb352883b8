#include "store/rewriter.h"

#include <algorithm>
#include <map>

#include "store/bck.h"
#include "store/store.h"
#include "util/checksum.h"
#include "util/strings.h"

namespace ais {
namespace {

// Writes all of src's bytes into w; with `verify`, hashes them on the way and fails with
// kCorruption if they do not match src's stored checksum.
Status WriteObjectBytes(const std::string& bucket, ObjectHandle& src, ObjectWriter& w, bool verify) {
  std::unique_ptr<Checksummer> ck;
  if (verify && !src.meta().cksum_type.empty() && !src.meta().cksum_value.empty()) {
    auto c = Checksummer::Create(src.meta().cksum_type);
    if (!c.ok()) return c.status();
    ck = std::move(*c);
  }
  auto segs = src.Slice(0, src.meta().size);
  if (!segs.ok()) return segs.status();
  std::vector<char> buf(kSegmentBuf);
  AIS_RETURN_IF_ERROR(StreamSegments(*segs, buf, [&](const char* p, size_t n) {
    if (ck) ck->Update(p, n);
    return w.Write(p, n);
  }));
  if (ck) {
    const ObjectMeta& m = src.meta();
    if (std::string got = ck->FinishHex(); got != m.cksum_value) {
      return Status::Corruption("BAD DATA CHECKSUM: " + ObjectCname(bucket, m.name) + ": " + m.cksum_type + "(" + got +
                                ") != " + m.cksum_type + "(" + m.cksum_value + ")");
    }
  }
  return Status::OK();
}

}  // namespace

Status Rewriter::Rechunk(const std::string& bucket, const std::string& name, uint64_t chunk_size) {
  auto h = store_.Open(bucket, name);
  if (!h.ok()) return h.status().IsNotFound() ? Status::OK() : h.status();
  const ObjectMeta meta = h->meta();
  if (meta.size == 0) return Status::OK();
  if (chunk_size == 0 && !meta.chunked()) return Status::OK();
  if (chunk_size > 0 && meta.chunked()) {
    uint64_t n = (meta.size + chunk_size - 1) / chunk_size;
    bool same = meta.chunk_sizes.size() == n;
    for (size_t i = 0; same && i + 1 < meta.chunk_sizes.size(); ++i) same = meta.chunk_sizes[i] == chunk_size;
    if (same) return Status::OK();
  }
  PutOptions opts;
  opts.custom = meta.custom;
  opts.force_chunk_size = chunk_size;
  Status st = Rewrite(bucket, name, *h, std::move(opts));
  return st.code() == Status::Code::kConflict ? Status::OK() : st;  // overwritten meanwhile: nothing to do
}

Status Rewriter::CopyInto(ObjectHandle& src, ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through) {
  // The writer re-hashes what it copies and compares it with the source's stored checksum
  // (BeginPut options): damaged source bytes never become a new object with a fresh checksum.
  // A write-through uploads before that commit check, so then the bytes are verified on the way.
  AIS_RETURN_IF_ERROR(WriteObjectBytes(src.bucket(), src, w, /*verify=*/static_cast<bool>(through)));
  return CommitThrough(w, out, through);
}

Status Rewriter::Rewrite(const std::string& bucket, const std::string& name, ObjectHandle& h, PutOptions opts) {
  const ObjectMeta& meta = h.meta();
  opts.size = meta.size;
  if (!opts.force_chunk_size) opts.force_chunk_size = meta.chunked() ? meta.max_chunk_size() : 0;
  opts.client_cksum_type = meta.cksum_type;
  opts.client_cksum_value = meta.cksum_value;
  opts.cksum_from_store = true;
  opts.expect = meta;
  auto w = store_.BeginPut(bucket, name, std::move(opts));
  if (!w.ok()) return w.status();
  ObjectMeta out;
  return CopyInto(h, **w, &out);
}

Status Rewriter::SetCustom(const std::string& bucket, const std::string& name,
                           std::vector<std::pair<std::string, std::string>> md, bool replace) {
  auto h = store_.Open(bucket, name);
  if (!h.ok()) return h.status();
  std::map<std::string, std::string> merged;
  if (!replace) merged.insert(h->meta().custom.begin(), h->meta().custom.end());
  for (auto& [k, v] : md) merged[k] = v;
  PutOptions opts;
  opts.custom.assign(merged.begin(), merged.end());
  // Through the normal commit path (atomic, crash-safe); a chunked object's chunks are copied too.
  Status st = Rewrite(bucket, name, *h, std::move(opts));
  if (st.code() == Status::Code::kConflict) {
    return Status::Conflict(ObjectCname(bucket, name) + " changed concurrently; retry");
  }
  return st;
}

Status Rewriter::Copy(const std::string& src_bucket, const std::string& src_name, const std::string& dst_bucket,
                      const std::string& dst_name, const WriteThroughFn& through) {
  auto h = store_.Open(src_bucket, src_name);
  if (!h.ok()) return h.status();
  PutOptions opts;
  opts.size = h->meta().size;
  opts.custom = h->meta().custom;
  opts.client_cksum_type = h->meta().cksum_type;
  opts.client_cksum_value = h->meta().cksum_value;
  opts.cksum_from_store = true;
  auto w = store_.BeginPut(dst_bucket, dst_name, std::move(opts));
  if (!w.ok()) return w.status();
  ObjectMeta out;
  return CopyInto(*h, **w, &out, through);
}

struct Rewriter::AppendState {
  std::string bucket;
  std::string name;
  std::mutex mu;
  std::unique_ptr<ObjectWriter> writer;  // guarded by mu; null once flushed
  std::chrono::steady_clock::time_point last_used;  // guarded by Rewriter::appends_mu_
};

Result<std::string> Rewriter::Append(const std::string& bucket, const std::string& name, const std::string& handle,
                                     const std::function<Status(ObjectWriter&)>& write_body) {
  std::shared_ptr<AppendState> st;
  std::string id = handle;
  {
    std::lock_guard lock(appends_mu_);
    auto now = std::chrono::steady_clock::now();
    for (auto it = appends_.begin(); it != appends_.end();) {  // expire abandoned appends
      it = now - it->second->last_used > kAppendTtl ? appends_.erase(it) : std::next(it);
    }
    if (!handle.empty()) {
      auto it = appends_.find(handle);
      if (it == appends_.end() || it->second->bucket != bucket || it->second->name != name) {
        return Status::NotFound("append handle \"" + handle + "\" not found for " + ObjectCname(bucket, name));
      }
      st = it->second;
    }
    if (st) st->last_used = now;
    if (!st && appends_.size() >= kMaxOpenAppends) {
      return Status::TooManyRequests("too many appends in progress (" + std::to_string(kMaxOpenAppends) +
                                     "): flush one, or retry later");
    }
  }
  if (!st) {
    // As AIS does, an append to an existing object starts from its current content (checked
    // against its checksum on the way: damaged bytes never get a fresh checksum).
    PutOptions opts;
    auto cur = store_.Open(bucket, name);
    if (!cur.ok() && cur.status().code() != Status::Code::kNotFound) return cur.status();
    if (cur.ok()) opts.custom = cur->meta().custom;
    auto w = store_.BeginPut(bucket, name, std::move(opts));
    if (!w.ok()) return w.status();
    if (cur.ok()) AIS_RETURN_IF_ERROR(WriteObjectBytes(bucket, *cur, **w, /*verify=*/true));
    st = std::make_shared<AppendState>();
    st->bucket = bucket;
    st->name = name;
    st->writer = std::move(*w);
    st->last_used = std::chrono::steady_clock::now();
    id = RandomId(16);
    std::lock_guard lock(appends_mu_);
    appends_[id] = st;
  }
  std::lock_guard lock(st->mu);
  if (!st->writer) return Status::NotFound("append handle \"" + id + "\" was already flushed");
  Status body = write_body(*st->writer);
  if (!body.ok()) {  // e.g. a full disk: drop the partial append now rather than at expiry
    st->writer.reset();
    std::lock_guard al(appends_mu_);
    appends_.erase(id);
    return body;
  }
  return id;
}

Status Rewriter::AppendFlush(const std::string& bucket, const std::string& name, const std::string& handle,
                             ObjectMeta* meta, const WriteThroughFn& through) {
  std::shared_ptr<AppendState> st;
  {
    std::lock_guard lock(appends_mu_);
    auto it = appends_.find(handle);
    if (it == appends_.end() || it->second->bucket != bucket || it->second->name != name) {
      return Status::NotFound("append handle \"" + handle + "\" not found for " + ObjectCname(bucket, name));
    }
    st = it->second;
    appends_.erase(it);
  }
  std::lock_guard lock(st->mu);
  if (!st->writer) return Status::NotFound("append handle \"" + handle + "\" was already flushed");
  auto w = std::move(st->writer);
  return CommitThrough(*w, meta, through);
}

}  // namespace ais
