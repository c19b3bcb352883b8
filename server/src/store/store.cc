#include "store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>

#include "store/header_cache.h"
#include "store/names.h"
#include "store/sorted_walker.h"
#include "util/clock.h"
#include "util/go_duration.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {

Store::Store(StoreOptions opts)
    : volume_(std::move(opts.mountpaths), opts.fsync, opts.fshc_interval_ms),
      mps_(volume_.mountpaths()),
      capacity_(mps_, opts.lru_min_dont_evict),
      buckets_(mps_, opts.fsync),
      mirror_(volume_, buckets_),
      committer_(volume_, buckets_, mirror_),
      uploads_(committer_, buckets_, mps_),
      rewriter_(*this) {}

Store::~Store() {
  StopSnapshotSaver();
  if (header_loader_.joinable()) header_loader_.join();
  repairs_.Stop();
  if (repairer_.joinable()) repairer_.join();
}

Result<std::unique_ptr<Store>> Store::Open(StoreOptions opts) {
  if (opts.mountpaths.empty()) return Status::InvalidArgument("at least one mountpath is required");
  const std::chrono::milliseconds snapshot_every = opts.header_snapshot_interval;
  std::unique_ptr<Store> store(new Store(std::move(opts)));
  AIS_RETURN_IF_ERROR(store->volume_.Open());
  AIS_RETURN_IF_ERROR(store->buckets_.Load());
  // Data but no state file before this start: where its objects are is unknown.
  if (store->volume_.fresh() && !store->buckets_.Names().empty()) store->volume_.AssumeOffPrimary();
  AIS_RETURN_IF_ERROR(store->committer_.Recover());
  // On a thread: the store serves meanwhile (what it changes meanwhile the Load leaves alone),
  // only walks and listings wait for it (ForEachObject).
  std::promise<void> loaded;
  store->headers_loaded_ = loaded.get_future().share();
  store->header_loader_ = std::thread([s = store.get(), loaded = std::move(loaded)]() mutable {
    s->LoadHeaderSnapshots();
    loaded.set_value();
  });
  store->mirror_.set_on_degraded([s = store.get()](const std::string& b, const std::string& n) { s->QueueRepair(b, n); });
  store->repairer_ = std::thread([s = store.get()] { s->RepairLoop(); });
  if (snapshot_every.count() > 0) {
    store->snapshot_saver_ = std::thread([s = store.get(), snapshot_every] { s->SnapshotSaverLoop(snapshot_every); });
  }
  store->volume_.StartHealthChecks();
  return store;
}

void Store::LoadHeaderSnapshots() {
  const auto start = std::chrono::steady_clock::now();
  size_t kept = 0;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    auto got = Headers().Load(mps_.HeaderSnapshotPath(mp));
    if (!got.ok()) {
      LogWarning("object headers saved by the last run, not used: " + got.status().message());
    } else {
      kept += *got;
    }
  }
  if (kept == 0) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  LogInfo(std::to_string(kept) + " object headers of the last run taken in " + std::to_string(ms.count()) + " ms");
}

Status Store::SaveHeaderSnapshots() {
  StopSnapshotSaver();
  if (header_loader_.joinable()) header_loader_.join();
  if (Headers().size() == 0) return Status::OK();
  // The last writes' directories settle first (HeaderCache::kSettleNs): the server is stopping.
  std::this_thread::sleep_for(std::chrono::nanoseconds(HeaderCache::kSettleNs));
  return SaveSnapshots(HeaderCache::kSettleNs);
}

Status Store::SaveSnapshots(int64_t settle_ns, size_t* unsettled) {
  Status first;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    Status st = Headers().Save(mps_.path(mp) + "/", mps_.HeaderSnapshotPath(mp), settle_ns, unsettled);
    if (first.ok()) first = st;
  }
  return first;
}

void Store::SnapshotSaverLoop(std::chrono::milliseconds interval) {
  headers_loaded_.wait();  // the Load removed the snapshots it read: the first round saves anew
  std::optional<uint64_t> saved;  // Headers().changes() at the last save
  bool warned = false;
  std::unique_lock lock(saver_mu_);
  while (!saver_cv_.wait_for(lock, interval, [this] { return saver_stop_; })) {
    const uint64_t changes = Headers().changes();
    if (saved == changes || Headers().size() == 0) continue;
    lock.unlock();
    size_t unsettled = 0;
    Status st = SaveSnapshots(HeaderCache::kRunningSettleNs, &unsettled);
    lock.lock();
    if (st.ok()) {
      if (unsettled == 0) saved = changes;  // else the next round saves what was left out
      warned = false;
    } else if (!warned) {  // once per failing spell: a full or failed disk would repeat it
      LogWarning("saving the object headers (periodic): " + st.message());
      warned = true;
    }
  }
}

void Store::StopSnapshotSaver() {
  {
    std::lock_guard lock(saver_mu_);
    saver_stop_ = true;
  }
  saver_cv_.notify_all();
  if (snapshot_saver_.joinable()) snapshot_saver_.join();
}

Status Store::EnableMountpath(const std::string& path) {
  bool enabled = false;
  AIS_RETURN_IF_ERROR(volume_.Enable(path, [this](size_t mp) { return committer_.Reconcile(mp); }, &enabled));
  return enabled ? buckets_.Persist() : Status::OK();  // the BMD copy on it may be stale
}

Status Store::AttachMountpath(const std::string& path) {
  bool added = false;
  AIS_RETURN_IF_ERROR(volume_.Attach(path, &added));
  return added ? buckets_.Persist() : Status::OK();  // the BMD goes to the new mountpath too
}

namespace {

// The `lru` keys of a props document that BucketProps cannot judge alone: only a remote
// bucket's objects are ever evicted, and the two durations are the cluster's (SpaceConfig).
Status CheckLruProps(const std::string& bucket, const nlohmann::json& props, const SpaceConfig& cluster) {
  if (!props.is_object() || !props.contains("lru") || !props["lru"].is_object()) return Status::OK();
  const nlohmann::json& lru = props["lru"];
  if (lru.contains("enabled") && lru["enabled"] == true && !IsRemoteKey(bucket)) {
    return Status::NotSupported("invalid \"value.lru.enabled\": " + BucketCname(bucket) +
                                " is not a remote bucket: only cached remote objects are ever evicted");
  }
  for (auto [key, value] : {std::pair{"dont_evict_time", cluster.dont_evict_time},
                            std::pair{"capacity_upd_time", cluster.capacity_upd_time}}) {
    if (!lru.contains(key) || !lru[key].is_string()) continue;
    auto given = ParseGoDuration(lru[key].get<std::string>());
    if (given.ok() && (*given == value || given->count() == 0)) continue;
    return Status::NotSupported(std::string("invalid \"value.lru.") + key + "\": lru." + key +
                                " is set for the whole cluster here (set-config), not per bucket; it is " +
                                FormatGoDuration(value));
  }
  return Status::OK();
}

// mirror.copies against the mountpaths there are (BucketProps checks the range alone): `patch`
// applied to `base`. A patch Apply refuses is left for Apply to refuse.
Status CheckMirrorProps(BucketProps base, const nlohmann::json& patch, size_t mountpaths) {
  if (!patch.is_object() || !base.Apply(patch).ok() || base.copies() <= mountpaths) return Status::OK();
  return Status::InvalidArgument("invalid mirror.copies: " + std::to_string(base.copies()) +
                                 " exceeds the number of mountpaths (" + std::to_string(mountpaths) + ")");
}

}  // namespace

Status Store::CreateBucket(const std::string& bucket, const nlohmann::json& props) {
  const SpaceConfig cluster = capacity_.config();
  AIS_RETURN_IF_ERROR(CheckLruProps(bucket, props, cluster));
  AIS_RETURN_IF_ERROR(CheckMirrorProps(BucketProps{}, props, mps_.count()));
  // AIS DefaultProps: a new bucket takes the cluster's lru.enabled, never an ais:// one. Props
  // that are not an object (nor null: none) go to Create as they are, to be refused there.
  if (!props.is_object() && !props.is_null()) return buckets_.Create(bucket, props);
  nlohmann::json with_lru = props.is_object() ? props : nlohmann::json::object();
  if (!with_lru.contains("lru") || with_lru["lru"].is_null()) with_lru["lru"] = nlohmann::json::object();
  if (with_lru["lru"].is_object() && !with_lru["lru"].contains("enabled")) {
    with_lru["lru"]["enabled"] = IsRemoteKey(bucket) && cluster.lru_enabled;
  }
  return buckets_.Create(bucket, with_lru);
}

Status Store::UpdateBucket(const std::string& bucket, const nlohmann::json& patch) {
  AIS_RETURN_IF_ERROR(CheckLruProps(bucket, patch, capacity_.config()));
  if (auto cur = buckets_.Get(bucket)) AIS_RETURN_IF_ERROR(CheckMirrorProps(*cur, patch, mps_.count()));
  return buckets_.Update(bucket, patch);
}

Status Store::DestroyBucket(const std::string& bucket) {
  AIS_RETURN_IF_ERROR(buckets_.Remove(bucket));  // the commit point: invisible from here on
  std::vector<std::string> trash;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    std::string t = mps_.WorkDir(mp) + "/trash-" + RandomId(12);
    if (::rename(mps_.BucketDir(mp, bucket).c_str(), t.c_str()) == 0) trash.push_back(std::move(t));
    Headers().ForgetUnder(mps_.BucketDir(mp, bucket) + "/");
  }
  // Deleting millions of files takes a while: do it off the request path. Whatever a crash
  // interrupts, startup recovery sweeps (trash-* in the work dirs).
  std::thread([trash = std::move(trash)] {
    for (auto& t : trash) (void)RemoveTree(t);
  }).detach();
  return Status::OK();
}

Result<BucketProps> Store::GetBucket(const std::string& bucket) const {
  auto props = buckets_.Get(bucket);
  if (!props) return BucketRegistry::NotFound(bucket);
  return *props;
}

Result<std::unique_ptr<ObjectWriter>> Store::BeginPut(const std::string& bucket, const std::string& name,
                                                      PutOptions opts) {
  auto props = GetBucket(bucket);
  if (!props.ok()) return props.status();
  AIS_RETURN_IF_ERROR(capacity_.CheckWrite());
  std::unique_ptr<ObjectWriter> w(
      new ObjectWriter(&committer_, &volume_, &buckets_, bucket, name, *props, std::move(opts)));
  AIS_RETURN_IF_ERROR(w->Init());
  return w;
}

Result<ObjectHandle> Store::Open(const std::string& bucket, const std::string& name) {
  // Recorded before the file is opened: an eviction that checks after this leaves the object.
  atimes_.Touch(bucket, name, NowNs());
  return OpenQuiet(bucket, name);
}

Result<ObjectHandle> Store::OpenQuiet(const std::string& bucket, const std::string& name) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  size_t mp = 0;
  auto fd = volume_.OpenObjectFile(bucket, name, &mp);
  return OpenWith(bucket, name, std::move(fd), mp);
}

Result<ObjectHandle> Store::Open(const BucketDirs& dirs, const std::string& name, std::span<char> ahead,
                                 size_t* got) {
  if (got != nullptr) *got = 0;
  const std::string& bucket = dirs.bucket_;
  auto props = buckets_.Get(bucket);
  if (!props) return BucketRegistry::NotFound(bucket);
  size_t mp = mps_.PrimaryFor(bucket, name);
  if (props->bid != dirs.bid_ || props->created_ns != dirs.created_ns_ || mp >= dirs.dirs_.size() ||
      !dirs.dirs_[mp].valid()) {
    return OpenWith(bucket, name, OpenFile(mps_.ObjectPath(mp, bucket, name), O_RDONLY), mp, ahead, got);
  }
  atimes_.Touch(bucket, name, NowNs());  // before the open, as Open(bucket, name)
  int fd = ::openat(dirs.dirs_[mp].get(), ObjectRelPath(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && volume_.MayBeOffPrimary()) {
      auto found = volume_.OpenObjectFile(bucket, name, &mp);
      return OpenWith(bucket, name, std::move(found), mp, ahead, got);
    }
    return OpenWith(bucket, name, Status::FromErrno(err, "open " + mps_.ObjectPath(mp, bucket, name)), mp);
  }
  return OpenWith(bucket, name, UniqueFd(fd), mp, ahead, got);
}

Result<ObjectHandle> Store::OpenFileHandle(const std::string& bucket, const std::string& name, Result<UniqueFd> fd,
                                           std::span<char> ahead, size_t* got) {
  if (!fd.ok()) {
    if (fd.status().IsNotFound()) return Status::NotFound(ObjNotFoundMessage(bucket, name));
    return fd.status();
  }
  ObjectHandle h;
  h.mps_ = &mps_;
  h.bucket_ = bucket;
  h.primary_ = std::move(*fd);
  size_t ignored = 0;
  auto meta = ReadObjectHeader(h.primary_.get(), &h.data_offset_, ahead, got ? got : &ignored);
  if (!meta.ok()) return meta.status();
  struct stat st {};
  if (::fstat(h.primary_.get(), &st) != 0) return Status::FromErrno(errno, "fstat");
  if (meta->name != name) {  // a damaged header (a flipped byte in the name field)
    return Status::Corruption(ObjectCname(bucket, name) + ": object header is damaged: it names \"" +
                              meta->name + "\"");
  }
  AIS_RETURN_IF_ERROR(CheckObjectLayout(*meta, h.data_offset_, static_cast<uint64_t>(st.st_size)));
  h.meta_ = std::move(*meta);
  return h;
}

namespace {

std::pair<uint64_t, uint64_t> FileId(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {0, 0};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

}  // namespace

Result<ObjectHandle> Store::OpenWith(const std::string& bucket, const std::string& name, Result<UniqueFd> fd,
                                     size_t mp, std::span<char> ahead, size_t* got) {
  auto h = OpenFileHandle(bucket, name, std::move(fd), ahead, got);
  if (!mirror_.MayHaveCopies(bucket)) return h;
  // A mirrored object opens whole (every chunk too), so that a lost chunk falls over to a copy
  // here rather than failing a read halfway.
  if (h.ok() && h->meta().chunked()) {
    if (Status st = h->OpenAll(); !st.ok()) h = st;
  }
  if (h.ok()) {
    ReadLeastBusy(bucket, name, mp, *h, got);
    return h;
  }
  if (h.status().code() == Status::Code::kConflict) return h;
  auto copy = OpenCopy(bucket, name, {0, 0}, false);
  if (!copy.ok()) return h;
  if (got != nullptr) *got = 0;
  QueueRepair(bucket, name);
  return copy;
}

void Store::ReadLeastBusy(const std::string& bucket, const std::string& name, size_t mp, ObjectHandle& h,
                          size_t* got) {
  const size_t copies = mirror_.Copies(bucket);
  size_t best = mp;
  if (copies > 1) {
    int32_t least = mps_.reading(mp)->load(std::memory_order_relaxed);
    for (size_t slot : mps_.MirrorSlots(bucket, name, mp, copies)) {
      const int32_t n = mps_.reading(slot)->load(std::memory_order_relaxed);
      if (n < least) {
        least = n;
        best = slot;
      }
    }
  }
  if (best != mp) {  // the copy there, if it is of this very version
    auto c = OpenFileHandle(bucket, name, OpenFile(mps_.MirrorPath(best, bucket, name), O_RDONLY));
    const ObjectMeta& m = h.meta();
    if (c.ok() && c->meta().version == m.version && c->meta().size == m.size && c->meta().cksum_value == m.cksum_value) {
      h = std::move(*c);
      if (got != nullptr) *got = 0;
    } else {
      best = mp;
    }
  }
  h.reading_ = ReadingOn(mps_.reading(best));
}

Result<ObjectHandle> Store::OpenCopy(const std::string& bucket, const std::string& name,
                                     std::pair<uint64_t, uint64_t> skip, bool verify) {
  for (size_t mp : mps_.Ranked(bucket, name)) {
    if (!mps_.enabled(mp)) continue;
    auto fd = OpenFile(mps_.MirrorPath(mp, bucket, name), O_RDONLY);
    if (!fd.ok()) continue;
    if (skip.second != 0 && FileId(fd->get()) == skip) continue;
    auto h = OpenFileHandle(bucket, name, std::move(fd));
    if (!h.ok()) continue;
    if (verify && !h->VerifyChecksum().ok()) continue;
    if (Status st = h->OpenAll(); !st.ok()) continue;
    return h;
  }
  return Status::NotFound(ObjNotFoundMessage(bucket, name));
}

Result<ObjectHandle> Store::OpenGoodCopy(const std::string& bucket, const std::string& name, const ObjectHandle& bad) {
  if (!mirror_.MayHaveCopies(bucket)) return Status::NotFound(ObjNotFoundMessage(bucket, name));
  auto h = OpenCopy(bucket, name, FileId(bad.primary_.get()), true);
  if (h.ok()) QueueRepair(bucket, name);
  return h;
}

std::vector<std::string> Store::CopyLocations(const std::string& bucket, const std::string& name) const {
  std::vector<std::string> out;
  auto at = volume_.LocateObject(bucket, name);
  if (at) out.push_back(mps_.path(*at));
  if (!mirror_.MayHaveCopies(bucket)) return out;
  for (size_t mp : mps_.Ranked(bucket, name)) {
    if (mps_.enabled(mp) && ::access(mps_.MirrorPath(mp, bucket, name).c_str(), F_OK) == 0) {
      out.push_back(mps_.path(mp));
    }
  }
  return out;
}

void Store::QueueRepair(const std::string& bucket, const std::string& name) {
  if (!repairs_.TryPush({bucket, name})) repairs_dropped_.fetch_add(1, std::memory_order_relaxed);
}

void Store::RepairLoop() {
  while (auto item = repairs_.Pop()) {
    const auto& [bucket, name] = *item;
    const size_t copies = mirror_.Copies(bucket);
    Status st = SyncCopies(bucket, name, copies);
    if (st.ok()) {
      repairs_done_.fetch_add(1, std::memory_order_relaxed);
    } else if (!st.IsNotFound() && st.code() != Status::Code::kBucketNotFound) {
      LogWarning(ObjectCname(bucket, name) + ": copies not repaired: " + st.message());
    }
  }
}

Status Store::SyncCopies(const std::string& bucket, const std::string& name, size_t copies, size_t* written) {
  if (written != nullptr) *written = 0;
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  std::lock_guard lock(committer_.StripeFor(bucket, name));
  return SyncCopiesLocked(bucket, name, copies, written);
}

Status Store::SyncCopiesLocked(const std::string& bucket, const std::string& name, size_t copies, size_t* written) {
  size_t n = 0;
  if (written != nullptr) *written = 0;
  size_t at = 0;
  std::optional<RelocationLog::Move> moving;  // from the object file's restore to its copies' removal
  auto obj = OpenFileHandle(bucket, name, volume_.OpenObjectFile(bucket, name, &at));
  if (obj.ok()) {
    if (Status st = obj->OpenAll(); !st.ok()) obj = st;
  }
  if (!obj.ok()) {
    // The object file is missing or damaged: restored from a good copy, on the primary mountpath.
    auto copy = OpenCopy(bucket, name, {0, 0}, true);
    if (!copy.ok()) return obj.status();
    moving.emplace(committer_.relocations(), bucket, name);
    const size_t old_at = at;
    const std::string old_path = mps_.ObjectPath(old_at, bucket, name);
    std::optional<ObjectMeta> old;  // a damaged chunked object's chunks go as an overwrite's would
    if (auto ofd = OpenFile(old_path, O_RDONLY); ofd.ok()) {
      uint64_t off = 0;
      if (auto m = ReadObjectHeader(ofd->get(), &off); m.ok() && m->chunked()) old = std::move(*m);
    }
    if (old) AIS_RETURN_IF_ERROR(committer_.WriteChunkMarker(old_at, bucket, name, old->upload_id));
    at = mps_.PrimaryFor(bucket, name);
    std::string temp;
    Status wrote = mirror_.WriteTemp(at, copy->meta(), copy->Segments(0, copy->size()), &temp);
    if (!wrote.ok() && wrote.code() != Status::Code::kNoSpace && !volume_.Check(at)) {  // its disk is gone
      at = mps_.PrimaryFor(bucket, name);
      wrote = mirror_.WriteTemp(at, copy->meta(), copy->Segments(0, copy->size()), &temp);
    }
    AIS_RETURN_IF_ERROR(wrote);
    const std::string path = mps_.ObjectPath(at, bucket, name);
    if (Status st = mirror_.PlaceAt(temp, path, bucket); !st.ok()) {
      ::unlink(temp.c_str());
      return st;
    }
    Headers().ForgetPath(path);
    if (old_path != path && ::unlink(old_path.c_str()) == 0) Headers().ForgetPath(old_path);
    if (old) committer_.DropChunks(old_at, bucket, old->upload_id);
    ++n;
    obj = OpenFileHandle(bucket, name, OpenFile(path, O_RDONLY));
    if (obj.ok()) {
      if (Status st = obj->OpenAll(); !st.ok()) obj = st;
    }
    if (!obj.ok()) return obj.status();
  }
  const ObjectMeta& meta = obj->meta();
  std::vector<size_t> keep = mps_.MirrorSlots(bucket, name, at, copies);
  for (size_t mp : keep) {
    const std::string path = mps_.MirrorPath(mp, bucket, name);
    auto have = OpenFileHandle(bucket, name, OpenFile(path, O_RDONLY));
    if (have.ok() && have->meta().version == meta.version && have->meta().size == meta.size &&
        have->meta().cksum_value == meta.cksum_value) {
      continue;
    }
    std::string temp;
    AIS_RETURN_IF_ERROR(mirror_.WriteTemp(mp, meta, obj->Segments(0, meta.size), &temp));
    if (Status st = mirror_.PlaceAt(temp, path, bucket); !st.ok()) {
      ::unlink(temp.c_str());
      return st;
    }
    ++n;
  }
  mirror_.RemoveCopies(bucket, name, keep);  // also one next to the object: it protects nothing
  if (written != nullptr) *written = n;
  return Status::OK();
}

Result<BucketDirs> Store::OpenBucketDirs(const std::string& bucket) {
  auto props = buckets_.Get(bucket);
  if (!props) return BucketRegistry::NotFound(bucket);
  BucketDirs dirs;
  dirs.bucket_ = bucket;
  dirs.bid_ = props->bid;
  dirs.created_ns_ = props->created_ns;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    auto fd = OpenFile(mps_.ObjectsDir(mp, bucket), O_RDONLY | O_DIRECTORY);
    dirs.dirs_.push_back(fd.ok() ? std::move(*fd) : UniqueFd());
  }
  return dirs;
}

Result<ObjectMeta> Store::Head(const std::string& bucket, const std::string& name) {
  auto h = OpenQuiet(bucket, name);
  if (!h.ok()) return h.status();
  return h->meta();
}

Status Store::Delete(const std::string& bucket, const std::string& name) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  AIS_RETURN_IF_ERROR(committer_.Remove(bucket, name));
  atimes_.Forget(bucket, name);
  return Status::OK();
}

Status Store::Evict(const std::string& bucket, const std::string& name, uint64_t version, int64_t seen_atime_ns,
                    uint64_t* bytes) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  // Checked under the object's stripe lock: no commit slips between the check and the unlink,
  // and a read records its access before it opens the file, so a read that opened it before
  // the check is seen; one that starts after the unlink finds the object gone (a cold GET).
  auto changed = [&](const ObjectMeta& cur) {
    return cur.version != version || std::max(cur.atime_ns, atimes_.Get(bucket, name)) > seen_atime_ns;
  };
  AIS_RETURN_IF_ERROR(committer_.Remove(bucket, name, changed, bytes));
  atimes_.Forget(bucket, name);
  return Status::OK();
}

Status Store::RemoveOrphanedChunks(std::chrono::seconds age, const std::function<bool()>& stop,
                                   const std::function<void(uint64_t bytes)>& removed) {
  // The markers first, then the walk: an upload that commits in between is either still marked
  // or already in the header the walk reads.
  const std::set<std::string> marked = committer_.ChunkMarkers();
  for (const auto& bucket : buckets_.Names()) {
    std::set<std::string> keep = marked;
    ObjectWalk walk{.prefix = {}, .after = {}, .headers = true, .stop = stop};
    Status st = ForEachObject(bucket, walk, [&](const WalkedObject& obj) {
      if (obj.meta().chunked()) keep.insert(obj.meta().upload_id);
      return Status::OK();
    });
    if (st.code() == Status::Code::kBucketNotFound) continue;
    AIS_RETURN_IF_ERROR(st);
    if (stop()) return Status::OK();
    AIS_RETURN_IF_ERROR(committer_.RemoveUnreferencedChunks(bucket, keep, age, stop, removed));
  }
  return Status::OK();
}

Status Store::ListEach(const std::string& bucket, const ListQuery& q, const ListVisitor& visit) {
  size_t visited = 0;
  ObjectWalk walk{.prefix = q.prefix, .after = q.after, .headers = q.headers,
                  .stop = [&visited, &q] { return visited >= q.limit; }};
  return ForEachObject(bucket, walk, [&](const WalkedObject& obj) {
    visit(obj.name(), obj.meta());
    ++visited;
    return Status::OK();
  });
}

Status Store::ForEachObject(const std::string& bucket, const ObjectWalk& walk, const ObjectVisitor& visit) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  headers_loaded_.wait();  // a walk right after the start would read every header itself
  RelocationLog::Walk moves(committer_.relocations(), bucket);  // before any directory is read
  std::vector<SortedWalker> walkers;
  std::vector<size_t> walker_mp;
  std::vector<bool> walker_copies;  // whether it walks mirror copies (%mi), not object files
  const bool mirrored = mirror_.MayHaveCopies(bucket);
  for (bool copies : {false, true}) {
    if (copies && !mirrored) break;
    for (size_t mp = 0, used = mps_.size(); mp < used; ++mp) {
      if (!mps_.enabled(mp)) continue;
      walkers.emplace_back(copies ? mps_.MirrorDir(mp, bucket) : mps_.ObjectsDir(mp, bucket), walk.prefix, walk.after);
      walker_mp.push_back(mp);
      walker_copies.push_back(copies);
    }
  }
  // The walkers' current names, least first (an object file before the copies of its name); a
  // walker moves on only once its object is visited, which keeps the name its head points to.
  struct Head {
    const std::string* name;
    size_t walker;
    bool copy;
    bool operator>(const Head& o) const { return *name != *o.name ? *name > *o.name : copy > o.copy; }
  };
  // The name visited last: no copy of it is visited, nor another object file of it (while
  // objects may be off their primary, a resilver's move has it on two mountpaths for a moment).
  const bool track = mirrored || volume_.MayBeOffPrimary();
  std::string last;
  std::vector<Head> heap;
  heap.reserve(walkers.size());
  auto advance = [&](size_t i) -> Status {
    auto more = walkers[i].Next();
    if (!more.ok()) return more.status();
    if (*more) {
      heap.push_back(Head{.name = &walkers[i].name(), .walker = i, .copy = walker_copies[i]});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
    return Status::OK();
  };
  for (size_t i = 0; i < walkers.size(); ++i) AIS_RETURN_IF_ERROR(advance(i));
  const ObjectMeta no_header;
  const bool stoppable = static_cast<bool>(walk.stop);
  // Visits what moved between mountpaths since the walk began, below `hi` (null: to the end) and
  // after the last name a walker gave: no walker gave these (RelocationLog).
  std::string passed = walk.after;  // the last name a walker gave
  auto visit_moved = [&](const std::string* hi) -> Status {
    for (const std::string& name : moves.MovedBetween(passed, hi)) {
      if (!name.starts_with(walk.prefix) || name == last) continue;
      if (stoppable && walk.stop()) return Status::OK();
      auto found = FindFile(bucket, name);
      if (!found.ok()) continue;  // deleted meanwhile
      const ObjectMeta& meta = walk.headers ? found->meta : no_header;
      AIS_RETURN_IF_ERROR(visit(WalkedObject(name, std::move(found->path), meta, found->mp)));
      last = name;
    }
    return Status::OK();
  };
  while (!heap.empty() && !(stoppable && walk.stop())) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const size_t at = heap.back().walker;
    SortedWalker& w = walkers[at];
    heap.pop_back();
    if (w.name() != passed) {
      AIS_RETURN_IF_ERROR(visit_moved(&w.name()));
      if (stoppable && walk.stop()) break;
      passed = w.name();
    }
    if (track && w.name() == last) {
      AIS_RETURN_IF_ERROR(advance(at));
      continue;
    }
    auto meta = walk.headers ? w.Meta() : Result<const ObjectMeta*>(&no_header);
    if (meta.ok()) {
      AIS_RETURN_IF_ERROR(visit(WalkedObject(w, **meta, walker_mp[at])));
      if (track) last = w.name();
    } else if (meta.status().code() == Status::Code::kCorruption) {  // one bad header: not the whole walk
      if (walk.damaged) {
        AIS_RETURN_IF_ERROR(walk.damaged(w.name(), meta.status()));
      } else {
        NoteDamaged(bucket, w.name(), w.path(), meta.status());
      }
    } else if (track && meta.status().IsNotFound() && w.name() != last) {
      // Deleted while walking, or moved (by a resilver, or a repair of its copies) after this
      // walker read its directory: then visited where it is now.
      if (auto found = FindFile(bucket, w.name()); found.ok()) {
        AIS_RETURN_IF_ERROR(visit(WalkedObject(w.name(), std::move(found->path), found->meta, found->mp)));
        last = w.name();
      }
    } else if (!meta.status().IsNotFound()) {  // missing: deleted while walking
      return meta.status();
    }
    AIS_RETURN_IF_ERROR(advance(at));
  }
  if (heap.empty()) return visit_moved(nullptr);
  return Status::OK();
}

Result<Store::FoundFile> Store::FindFile(const std::string& bucket, const std::string& name) {
  size_t mp = 0;
  auto h = OpenFileHandle(bucket, name, volume_.OpenObjectFile(bucket, name, &mp));
  if (h.ok()) {
    ObjectMeta meta = h->meta();
    meta.name.clear();
    return FoundFile{.meta = std::move(meta), .mp = mp, .path = mps_.ObjectPath(mp, bucket, name)};
  }
  if (!mirror_.MayHaveCopies(bucket)) return h.status();
  for (size_t at : mps_.Ranked(bucket, name)) {
    if (!mps_.enabled(at)) continue;
    std::string path = mps_.MirrorPath(at, bucket, name);
    auto copy = OpenFileHandle(bucket, name, OpenFile(path, O_RDONLY));
    if (!copy.ok()) continue;
    ObjectMeta meta = copy->meta();
    meta.name.clear();
    return FoundFile{.meta = std::move(meta), .mp = at, .path = std::move(path)};
  }
  return h.status();
}

void Store::NoteDamaged(const std::string& bucket, const std::string& name, const std::string& path,
                        const Status& why) {
  constexpr size_t kMaxLogged = 4096;  // then every skip is counted, none logged
  damaged_skipped_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(damaged_mu_);
    if (damaged_logged_.size() >= kMaxLogged || !damaged_logged_.insert(path).second) return;
  }
  LogError(ObjectCname(bucket, name) + " (" + path + ") skipped: " + why.message() +
           " (a scrub job quarantines it; DELETE removes it)");
}

WalkedObject::WalkedObject(const SortedWalker& walker, const ObjectMeta& meta, size_t mp)
    : name_(walker.name()), walker_(&walker), meta_(meta), mp_(mp) {}
std::string WalkedObject::path() const { return walker_ != nullptr ? walker_->path() : path_; }
ObjectMeta WalkedObject::Named() const {
  ObjectMeta m = meta_;
  m.name = name_;
  return m;
}

Result<std::vector<ObjectMeta>> Store::List(const std::string& bucket, const ListQuery& q) {
  std::vector<ObjectMeta> out;
  Status st = ListEach(bucket, q, [&out](const std::string& name, const ObjectMeta& meta) {
    out.push_back(meta);
    out.back().name = name;
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::shared_ptr<const ObjectHandle>> Store::OpenShared(Result<ObjectHandle> first,
                                                              const std::function<Result<ObjectHandle>()>& reopen) {
  auto h = OpenReading(std::move(first), reopen, [](ObjectHandle& o) { return o.OpenAll(); });
  if (!h.ok()) return h.status();
  return std::make_shared<const ObjectHandle>(std::move(*h));
}

Result<std::shared_ptr<const ObjectHandle>> Store::OpenShared(const std::string& bucket, const std::string& name) {
  auto reopen = [&] { return Open(bucket, name); };
  return OpenShared(reopen(), reopen);
}

}  // namespace ais
