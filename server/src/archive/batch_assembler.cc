#include "archive/batch_assembler.h"

#include <algorithm>
#include <exception>

#include "archive/archive_writer.h"
#include "archive/ordered_window.h"
#include "store/bck.h"
#include "store/store.h"
#include "util/file.h"

namespace ais {
namespace {

// Items up to this size are read into memory by fetchers; larger ones go from their files (by
// sendfile for plain tar).
constexpr size_t kInlineMax = 64 << 10;
constexpr size_t kMemoryBudget = 32 << 20;  // bytes fetched ahead, about
constexpr size_t kShardCache = 16;          // open shards kept for further items of one request

}  // namespace

struct BatchAssembler::Prepared {
  enum Kind {
    kMemory,    // `data` holds the entry, or `buf` at ArchiveWriter::kInPlaceHead when `in_place`
    kFiles,     // the entry is `segs` of `obj`
    kDeferred,  // the entry is [start, start+size) of archived file `path` in `shard`, read at write time
    kMissing,   // does not exist: a placeholder (with coer) or the batch's end
    kError,     // a hard error: the batch's end
  };
  Kind kind = kError;
  Status status;               // kMissing, kError
  bool missing_shard = false;  // kMissing: the shard itself is missing (placeholder without archpath)
  uint64_t size = 0;
  int64_t mtime = 0;
  std::string data;
  ByteBuffer buf;
  std::shared_ptr<const ObjectHandle> obj;
  std::vector<FileSegment> segs;
  std::shared_ptr<Shard> shard;
  uint64_t start = 0;
  bool in_place = false;  // kMemory: `buf` is laid out for ArchiveWriter::WriteEntryInPlace

  size_t memory() const { return data.size() + buf.capacity(); }
};

namespace {

using Prepared = BatchAssembler::Prepared;

Prepared Error(Status st) {
  Prepared p;
  p.kind = Prepared::kError;
  p.status = std::move(st);
  return p;
}

Prepared Missing(std::string msg, bool shard) {
  Prepared p;
  p.kind = Prepared::kMissing;
  p.status = Status::NotFound(std::move(msg));
  p.missing_shard = shard;
  return p;
}

// Reads the `len` bytes of `segs` into a buffer laid out for ArchiveWriter::WriteEntryInPlace.
Status ReadInPlace(const std::vector<FileSegment>& segs, uint64_t len, Prepared* p) {
  p->kind = Prepared::kMemory;
  p->in_place = true;
  p->buf = ByteBuffer(ArchiveWriter::InPlaceSize(len));
  return ReadSegments(segs, p->buf.data() + ArchiveWriter::kInPlaceHead);
}

// The item's range over `size` bytes (getbatch.md §2): [start, start+len).
Result<std::pair<uint64_t, uint64_t>> ResolveRange(int64_t start, int64_t length, uint64_t size) {
  auto bad = [&] {
    return Status::InvalidArgument("size=" + std::to_string(size) + ": not satisfiable range [start=" +
                                   std::to_string(start) + ",length=" + std::to_string(length) + "]");
  };
  if (start == 0 && length == 0) return std::make_pair(uint64_t{0}, size);
  auto s = static_cast<uint64_t>(start);
  if (s >= size) return bad();
  if (length == -1) return std::make_pair(s, size - s);
  auto l = static_cast<uint64_t>(length);
  if (l > size - s) return bad();
  return std::make_pair(s, l);
}

}  // namespace

BatchAssembler::BatchAssembler(Store& store, const MossRequest& req, ArchiveFormat format, BatchOptions opts)
    : store_(store), req_(req), format_(format), opts_(std::move(opts)) {}

std::string BatchAssembler::EntryName(const MossItem& it, bool with_archpath) const {
  std::string_view archpath = req_.archpath(it);
  std::string name;
  if (!req_.onob) {
    name = req_.bucket(it).name;
    name += '/';
  }
  name += req_.objname(it);
  if (with_archpath && !archpath.empty()) {
    if (!archpath.starts_with('/')) name += '/';
    name += archpath;
  }
  return name;
}

Result<std::shared_ptr<Shard>> BatchAssembler::GetShard(uint32_t bucket, const std::string& objname) {
  std::lock_guard lock(shards_mu_);
  for (auto it = shards_.begin(); it != shards_.end(); ++it) {
    if (it->bucket == bucket && it->objname == objname) {
      std::rotate(it, it + 1, shards_.end());  // most recently used last
      return shards_.back().shard;
    }
  }
  // Opening is cheap (an open and at most one 512-byte read): done under the lock so that two
  // fetchers never open the same shard twice.
  Result<std::shared_ptr<Shard>> shard = Status::OK();
  auto reopen = [&] { return OpenObject(bucket, objname); };
  auto obj = Store::OpenShared(reopen(), reopen);
  if (!obj.ok()) {
    shard = obj.status();
  } else {
    shard = Shard::Open(std::move(*obj), objname, std::nullopt);
  }
  if (shards_.size() >= kShardCache) shards_.erase(shards_.begin());
  shards_.push_back(CachedShard{bucket, objname, shard});
  return shard;
}

Result<ObjectHandle> BatchAssembler::OpenObject(uint32_t bucket, const std::string& objname, std::span<char> ahead,
                                                size_t* got) {
  if (got != nullptr) *got = 0;
  const std::optional<BucketDirs>& dirs = dirs_[bucket];
  if (dirs) return store_.Open(*dirs, objname, ahead, got);
  const std::string& key = keys_[bucket];
  auto h = store_.Open(key, objname);
  if (h.ok() || !h.status().IsNotFound() || !IsRemoteKey(key) || !opts_.fetch_missing) return h;
  if (Status st = opts_.fetch_missing(key, objname); !st.ok()) return st;  // cold: fetched on the way
  return store_.Open(key, objname);
}

Prepared BatchAssembler::PrepareObject(const MossItem& it) {
  std::string objname(req_.objname(it));
  auto reopen = [&] { return OpenObject(it.bucket, objname); };
  auto missing_or_error = [&](const Status& st) {
    return st.IsNotFound() ? Missing(opts_.node_id + ": " + st.message(), false) : Error(st);
  };
  // A whole object no larger than the previous one is read with its header, in one read instead
  // of two, into a buffer laid out for WriteEntryInPlace (objects of one batch are mostly alike).
  const bool whole = it.start == 0 && it.length == 0;  // a range, even one covering everything, has no mtime
  const size_t guess = whole ? size_hint_.load(std::memory_order_relaxed) : 0;
  ByteBuffer ahead;
  std::span<char> into;
  if (guess > 0 && guess <= kInlineMax) {
    ahead = ByteBuffer(ArchiveWriter::InPlaceSize(guess));
    into = std::span<char>(ahead.data() + ArchiveWriter::kInPlaceHead, guess);
  }
  size_t got = 0;
  auto h = OpenObject(it.bucket, objname, into, &got);
  if (!h.ok()) return missing_or_error(h.status());
  if (whole && verify_[it.bucket]) {  // checksum.validate_warm_get, as a GET of the object
    if (Status st = h->VerifyChecksum(); !st.ok()) return Error(st);
  }
  // The object's files, for a chunked object (its chunks are opened now) or one sent from its
  // file. A small monolithic object is read from the handle: no shared handle to build.
  std::shared_ptr<const ObjectHandle> obj;
  auto hold = [&]() -> Status {
    auto o = Store::OpenShared(std::move(h), reopen);
    if (!o.ok()) return o.status();
    obj = std::move(*o);
    return Status::OK();
  };
  if (h->meta().chunked()) {
    if (Status st = hold(); !st.ok()) return missing_or_error(st);
  }
  const ObjectMeta& meta = obj ? obj->meta() : h->meta();
  auto range = ResolveRange(it.start, it.length, meta.size);
  if (!range.ok()) return Error(range.status());
  auto [start, len] = *range;
  if (whole && meta.size != guess) size_hint_.store(meta.size, std::memory_order_relaxed);
  Prepared p;
  p.size = len;
  p.mtime = whole ? meta.atime_ns / 1000000000 : 0;
  if (len <= kInlineMax) {
    if (!obj && !ahead.empty() && got == len) {  // whole and read already (len <= guess)
      ahead.Truncate(ArchiveWriter::InPlaceSize(len));
      p.kind = Prepared::kMemory;
      p.in_place = true;
      p.buf = std::move(ahead);
      return p;
    }
    if (obj) {
      if (Status st = ReadInPlace(obj->Segments(start, len), len, &p); !st.ok()) return Error(st);
    } else {
      auto segs = h->Slice(start, len);
      if (!segs.ok()) return Error(segs.status());
      if (Status st = ReadInPlace(*segs, len, &p); !st.ok()) return Error(st);
    }
    return p;
  }
  if (!obj) {
    if (Status st = hold(); !st.ok()) return Error(st);
  }
  p.kind = Prepared::kFiles;
  p.segs = obj->Segments(start, len);
  p.obj = std::move(obj);
  return p;
}

Prepared BatchAssembler::PrepareArchived(const MossItem& it) {
  const MossBucket& bck = req_.bucket(it);
  std::string objname(req_.objname(it));
  std::string_view archpath = req_.archpath(it);
  auto shard = GetShard(it.bucket, objname);
  if (!shard.ok()) {
    if (shard.status().IsNotFound()) return Missing(opts_.node_id + ": " + shard.status().message(), true);
    return Error(shard.status());
  }
  auto m = (*shard)->Find(archpath);
  if (!m.ok()) {
    if (m.status().IsNotFound()) {
      return Missing(opts_.node_id + ": " + std::string(archpath) + " in " + bck.Cname() + "/" + objname +
                         " does not exist",
                     false);
    }
    return Error(m.status());
  }
  auto range = ResolveRange(it.start, it.length, m->size);
  if (!range.ok()) return Error(range.status());
  auto [start, len] = *range;
  Prepared p;
  p.size = len;
  p.mtime = 0;
  if (m->offset) {  // stored as is: like an object's bytes
    const auto& obj = (*shard)->object();
    if (len <= kInlineMax) {
      if (Status st = ReadInPlace(obj->Segments(*m->offset + start, len), len, &p); !st.ok()) return Error(st);
    } else {
      p.kind = Prepared::kFiles;
      p.segs = obj->Segments(*m->offset + start, len);
      p.obj = obj;
    }
    return p;
  }
  if (len <= opts_.extract_max) {
    p.kind = Prepared::kMemory;
    p.data.reserve(len);
    Status st = (*shard)->Read(archpath, start, len, [&](const char* d, size_t n) {
      p.data.append(d, n);
      return Status::OK();
    });
    if (!st.ok()) return Error(st);
    return p;
  }
  p.kind = Prepared::kDeferred;
  p.shard = std::move(*shard);
  p.start = start;
  return p;
}

Prepared BatchAssembler::Prepare(size_t i) {
  try {
    const MossItem& it = req_.items[i];
    const std::string& provider = req_.bucket(it).provider;
    if (provider != kProviderAis && !(IsServedCloud(provider) && opts_.fetch_missing)) {
      return Missing(opts_.node_id + ": bucket \"" + req_.bucket(it).Cname() + "\" does not exist", false);
    }
    return req_.archpath(it).empty() ? PrepareObject(it) : PrepareArchived(it);
  } catch (const std::exception& e) {  // allocation failure and the like: fail the batch, not the server
    return Error(Status::IOError(std::string("get-batch: ") + e.what()));
  }
}

Status BatchAssembler::Run(OutputSink* sink) {
  int64_t objs = 0;   // entries written, not yet reported to opts_.progress
  int64_t bytes = 0;
  Status st = RunItems(sink, &objs, &bytes);
  if (opts_.progress && objs > 0) opts_.progress(objs, bytes);
  return st;
}

Status BatchAssembler::RunItems(OutputSink* sink, int64_t* objs, int64_t* bytes) {
  constexpr int64_t kProgressEvery = 64;
  auto count = [&](uint64_t size) {
    *bytes += static_cast<int64_t>(size);
    if (++*objs >= kProgressEvery && opts_.progress) {
      opts_.progress(*objs, *bytes);
      *objs = *bytes = 0;
    }
  };
  auto writer = ArchiveWriter::Create(format_, sink);
  if (!writer.ok()) return writer.status();
  for (const MossBucket& b : req_.buckets) {
    keys_.push_back(BucketKey(b.provider, b.name));
    std::optional<BucketDirs> dirs;  // none: its objects are opened by key (and fail as they should)
    if (b.provider == kProviderAis) {
      if (auto d = store_.OpenBucketDirs(b.name); d.ok()) dirs = std::move(*d);
    }
    dirs_.push_back(std::move(dirs));
    auto props = store_.GetBucket(keys_.back());
    verify_.push_back(props.ok() && props->validate_warm_get);
  }
  ArchiveWriter& w = **writer;
  const size_t n = req_.items.size();
  if (opts_.keep_outcomes) outcomes_.assign(n, ItemOutcome{});
  OrderedWindow<Prepared>::Options wopts;
  wopts.window = opts_.window;
  wopts.workers = std::max<size_t>(1, opts_.fetchers) - 1;  // this thread fetches too
  wopts.memory_budget = kMemoryBudget;
  wopts.pool = opts_.pool;
  OrderedWindow<Prepared> window(n, wopts, [this](size_t i) { return Prepare(i); });
  for (size_t i = 0; i < n; ++i) {
    if (cancelled_.load(std::memory_order_relaxed)) {
      return Status::IOError(aborted_.load() ? "get-batch: the job was aborted" : "get-batch: cancelled");
    }
    if (soft_errs_ > opts_.max_soft_errs) {
      return Status::InvalidArgument("get-batch: exceeded soft-errors limit: " + std::to_string(soft_errs_) +
                                     " (max: " + std::to_string(opts_.max_soft_errs) + ")");
    }
    Prepared p = window.Take(i);
    const MossItem& it = req_.items[i];
    switch (p.kind) {
      case Prepared::kError: return p.status;
      case Prepared::kMissing: {
        if (!req_.coer) return p.status;
        ++soft_errs_;
        AIS_RETURN_IF_ERROR(w.WriteEntry("__404__/" + EntryName(it, !p.missing_shard), {}, 0));
        if (opts_.keep_outcomes) outcomes_[i].err_msg = p.status.message();
        count(0);
        continue;
      }
      case Prepared::kMemory:
        if (p.in_place) {
          AIS_RETURN_IF_ERROR(w.WriteEntryInPlace(EntryName(it, true), std::move(p.buf), p.size, p.mtime));
        } else {
          AIS_RETURN_IF_ERROR(w.WriteEntry(EntryName(it, true), p.data, p.mtime));
        }
        if (opts_.keep_outcomes) outcomes_[i].size = p.size;
        count(p.size);
        continue;
      case Prepared::kFiles:
        AIS_RETURN_IF_ERROR(w.BeginEntry(EntryName(it, true), p.size, p.mtime));
        AIS_RETURN_IF_ERROR(w.WriteFile(p.segs, p.obj));
        break;
      case Prepared::kDeferred:
        AIS_RETURN_IF_ERROR(w.BeginEntry(EntryName(it, true), p.size, p.mtime));
        AIS_RETURN_IF_ERROR(p.shard->Read(req_.archpath(it), p.start, p.size,
                                          [&w](const char* d, size_t len) { return w.Write(d, len); }));
        break;
    }
    AIS_RETURN_IF_ERROR(w.EndEntry());
    if (opts_.keep_outcomes) outcomes_[i].size = p.size;
    count(p.size);
  }
  return w.Finish();
}

}  // namespace ais
