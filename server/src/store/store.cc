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
      committer_(volume_, buckets_),
      uploads_(committer_, buckets_, mps_),
      rewriter_(*this) {}

Store::~Store() {
  if (header_loader_.joinable()) header_loader_.join();
}

Result<std::unique_ptr<Store>> Store::Open(StoreOptions opts) {
  if (opts.mountpaths.empty()) return Status::InvalidArgument("at least one mountpath is required");
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
      LogWarning("object headers saved at the last stop, not used: " + got.status().message());
    } else {
      kept += *got;
    }
  }
  if (kept == 0) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  LogInfo(std::to_string(kept) + " object headers saved at the last stop taken in " + std::to_string(ms.count()) + " ms");
}

Status Store::SaveHeaderSnapshots() {
  if (header_loader_.joinable()) header_loader_.join();
  if (Headers().size() == 0) return Status::OK();
  // The last writes' directories settle first (HeaderCache::kSettleNs): the server is stopping.
  std::this_thread::sleep_for(std::chrono::nanoseconds(HeaderCache::kSettleNs));
  Status first;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    Status st = Headers().Save(mps_.paths()[mp] + "/", mps_.HeaderSnapshotPath(mp));
    if (first.ok()) first = st;
  }
  return first;
}

Status Store::EnableMountpath(const std::string& path) {
  bool enabled = false;
  AIS_RETURN_IF_ERROR(volume_.Enable(path, [this](size_t mp) { return committer_.Reconcile(mp); }, &enabled));
  return enabled ? buckets_.Persist() : Status::OK();  // the BMD copy on it may be stale
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

}  // namespace

Status Store::CreateBucket(const std::string& bucket, const nlohmann::json& props) {
  const SpaceConfig cluster = capacity_.config();
  AIS_RETURN_IF_ERROR(CheckLruProps(bucket, props, cluster));
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
  return OpenWith(bucket, name, volume_.OpenObjectFile(bucket, name, &mp));
}

Result<ObjectHandle> Store::Open(const BucketDirs& dirs, const std::string& name, std::span<char> ahead,
                                 size_t* got) {
  if (got != nullptr) *got = 0;
  const std::string& bucket = dirs.bucket_;
  auto props = buckets_.Get(bucket);
  if (!props) return BucketRegistry::NotFound(bucket);
  size_t mp = mps_.PrimaryFor(bucket, name);
  if (props->bid != dirs.bid_ || props->created_ns != dirs.created_ns_ || !dirs.dirs_[mp].valid()) {
    return OpenWith(bucket, name, OpenFile(mps_.ObjectPath(mp, bucket, name), O_RDONLY), ahead, got);
  }
  atimes_.Touch(bucket, name, NowNs());  // before the open, as Open(bucket, name)
  int fd = ::openat(dirs.dirs_[mp].get(), ObjectRelPath(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && volume_.MayBeOffPrimary()) {
      return OpenWith(bucket, name, volume_.OpenObjectFile(bucket, name, &mp), ahead, got);
    }
    return OpenWith(bucket, name, Status::FromErrno(err, "open " + mps_.ObjectPath(mp, bucket, name)));
  }
  return OpenWith(bucket, name, UniqueFd(fd), ahead, got);
}

Result<ObjectHandle> Store::OpenWith(const std::string& bucket, const std::string& name, Result<UniqueFd> fd,
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
  std::vector<SortedWalker> walkers;
  std::vector<size_t> walker_mp;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    walkers.emplace_back(mps_.ObjectsDir(mp, bucket), walk.prefix, walk.after);
    walker_mp.push_back(mp);
  }
  // The walkers' current names, least first; a walker moves on only once its object is visited,
  // which keeps the name its head points to.
  struct Head {
    const std::string* name;
    size_t walker;
    bool operator>(const Head& o) const { return *name > *o.name; }
  };
  std::vector<Head> heap;
  heap.reserve(walkers.size());
  auto advance = [&](size_t i) -> Status {
    auto more = walkers[i].Next();
    if (!more.ok()) return more.status();
    if (*more) {
      heap.push_back(Head{.name = &walkers[i].name(), .walker = i});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
    return Status::OK();
  };
  for (size_t i = 0; i < walkers.size(); ++i) AIS_RETURN_IF_ERROR(advance(i));
  const ObjectMeta no_header;
  while (!heap.empty() && !(walk.stop && walk.stop())) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const size_t at = heap.back().walker;
    SortedWalker& w = walkers[at];
    heap.pop_back();
    auto meta = walk.headers ? w.Meta() : Result<const ObjectMeta*>(&no_header);
    if (meta.ok()) {
      AIS_RETURN_IF_ERROR(visit(WalkedObject(w, **meta, walker_mp[at])));
    } else if (meta.status().code() == Status::Code::kCorruption) {  // one bad header: not the whole walk
      if (walk.damaged) {
        AIS_RETURN_IF_ERROR(walk.damaged(w.name(), meta.status()));
      } else {
        NoteDamaged(bucket, w.name(), w.path(), meta.status());
      }
    } else if (!meta.status().IsNotFound()) {  // missing: deleted while walking
      return meta.status();
    }
    AIS_RETURN_IF_ERROR(advance(at));
  }
  return Status::OK();
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

const std::string& WalkedObject::name() const { return walker_.name(); }
std::string WalkedObject::path() const { return walker_.path(); }
ObjectMeta WalkedObject::Named() const {
  ObjectMeta m = meta_;
  m.name = walker_.name();
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
