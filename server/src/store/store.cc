#include "store/bck.h"
#include "store/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <queue>
#include <set>
#include <thread>

#include "store/header_cache.h"
#include "store/names.h"
#include "store/sorted_walker.h"
#include "util/clock.h"
#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {

struct MpuUpload {
  std::string bucket;
  std::string name;
  std::string id;
  size_t primary_mp = 0;
  std::vector<std::pair<std::string, std::string>> custom;
  std::mutex mu;
  int64_t created_ns = 0;
  std::map<uint32_t, uint64_t> parts;  // guarded by mu: part number -> size
  std::map<uint32_t, std::string> tags;  // guarded by mu: part number -> PartWriter::Commit's tag
  bool finished = false;               // guarded by mu
};

namespace {


// An upload that was completed or aborted is gone, as AIS reports it.
Status UploadGone(const std::string& bucket, const std::string& name, const std::string& upload_id) {
  return Status::NotFound(ObjectCname(bucket, name) + ": upload ID \"" + upload_id +
                          "\" does not exist (already completed or aborted)");
}

constexpr size_t kCopyBuf = 1 << 20;

// Sets each of `md`'s keys in `custom` (kept sorted), replacing a key's earlier value.
void MergeCustomInto(std::vector<std::pair<std::string, std::string>>* custom,
                     const std::vector<std::pair<std::string, std::string>>& md) {
  for (const auto& entry : md) {  // (no structured binding: clang 14 cannot capture one)
    auto it = std::find_if(custom->begin(), custom->end(), [&](const auto& kv) { return kv.first == entry.first; });
    if (it != custom->end()) it->second = entry.second;
    else custom->push_back(entry);
  }
  std::sort(custom->begin(), custom->end());
}
constexpr const char* kChunkMarkerPrefix = "chunks-";

// Reads the committed object's header, if any.
Result<ObjectMeta> ReadMetaAt(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  uint64_t off = 0;
  return ReadObjectHeader(fd->get(), &off);
}

bool IsMissing(const Status& s) { return s.IsNotFound(); }

// Gives the header just committed as `path` (the file open as `fd`) to the HeaderCache, so that a
// listing need not read it back.
void KeepHeader(const std::string& path, int fd, ObjectMeta* meta) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Headers().ForgetPath(path);
    return;
  }
  std::string name;
  name.swap(meta->name);  // the cache's copy goes without it (the file names it)
  auto kept = std::make_shared<const ObjectMeta>(*meta);
  meta->name = std::move(name);
  Headers().PutPath(path, static_cast<uint64_t>(st.st_ino), std::move(kept));
}

constexpr const char* kMountpathStateFile = "/.ais.vmd.json";

// Chunk `num` of an upload: where ForChunk puts it now, else on another enabled mountpath (it was
// written while the mountpaths' enabled set differed). Upload ids are unique, so any copy found
// is the chunk. kNotFound if it is nowhere and every mountpath is enabled; kIOError if it may be
// on a disabled one.
Result<UniqueFd> OpenChunk(const Mountpaths& mps, const std::string& bucket, const std::string& upload_id,
                           uint32_t num) {
  size_t at = mps.ForChunk(upload_id, num);
  auto fd = OpenFile(mps.ChunkPath(at, bucket, upload_id, num), O_RDONLY);
  if (fd.ok() || !fd.status().IsNotFound() || mps.size() == 1) return fd;
  for (size_t m = 0; m < mps.size(); ++m) {
    if (m == at || !mps.enabled(m)) continue;
    auto other = OpenFile(mps.ChunkPath(m, bucket, upload_id, num), O_RDONLY);
    if (other.ok() || !other.status().IsNotFound()) return other;
  }
  if (mps.num_disabled() > 0) {
    return Status::IOError(BucketCname(bucket) + ": chunk " + std::to_string(num) + " of upload " + upload_id +
                           " is unavailable (mountpath disabled)");
  }
  return fd;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Store

Store::Store(StoreOptions opts) : opts_(std::move(opts)), mps_(opts_.mountpaths), buckets_(mps_, opts_.fsync) {}

Store::~Store() {
  if (header_loader_.joinable()) header_loader_.join();
  if (fshc_.joinable()) {
    {
      std::lock_guard lock(fshc_mu_);
      fshc_stop_ = true;
    }
    fshc_cv_.notify_all();
    fshc_.join();
  }
}

Result<std::unique_ptr<Store>> Store::Open(StoreOptions opts) {
  if (opts.mountpaths.empty()) return Status::InvalidArgument("at least one mountpath is required");
  std::unique_ptr<Store> store(new Store(std::move(opts)));
  AIS_RETURN_IF_ERROR(store->LoadMountpathState());
  const bool no_state = store->mp_state_version_ == 0;
  store->roots_.resize(store->mps_.size());
  for (size_t mp = 0; mp < store->mps_.size(); ++mp) {
    if (!store->mps_.enabled(mp)) continue;
    AIS_RETURN_IF_ERROR(MkdirAll(store->mps_.WorkDir(mp)));
    struct stat st{};
    if (::stat(store->mps_.paths()[mp].c_str(), &st) != 0) return Status::FromErrno(errno, "stat mountpath");
    store->roots_[mp] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  if (store->cluster_uuid_.empty() || store->daemon_id_.empty()) {  // the first start
    if (store->cluster_uuid_.empty()) store->cluster_uuid_ = RandomId(10);
    if (store->daemon_id_.empty()) store->daemon_id_ = RandomId(8);
    std::lock_guard lock(store->mp_state_mu_);
    // Not fatal: a mountpath that cannot be written is found by the health check; the ids then
    // are new on the next start.
    if (Status st = store->SaveMountpathState(); !st.ok()) LogError("saving the node identity: " + st.message());
  }
  AIS_RETURN_IF_ERROR(store->buckets_.Load());
  if (no_state && !store->buckets_.Names().empty()) {
    // Data but no state file before this start: where its objects are is unknown.
    std::lock_guard lock(store->mp_state_mu_);
    store->off_primary_ = true;
    if (Status st = store->SaveMountpathState(); !st.ok()) LogError("saving the mountpath state: " + st.message());
  }
  AIS_RETURN_IF_ERROR(store->Recover());
  // On a thread: the store serves meanwhile (what it changes meanwhile the Load leaves alone),
  // only listings wait for it (ListEach).
  std::promise<void> loaded;
  store->headers_loaded_ = loaded.get_future().share();
  store->header_loader_ = std::thread([s = store.get(), loaded = std::move(loaded)]() mutable {
    s->LoadHeaderSnapshots();
    loaded.set_value();
  });
  if (store->opts_.fshc_interval_ms > 0) store->fshc_ = std::thread([s = store.get()] { s->FshcLoop(); });
  return store;
}

// ---------------------------------------------------------------------------------------------
// Mountpath health and state

Status Store::LoadMountpathState() {
  uint64_t best = 0;
  std::vector<std::string> disabled;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    auto content = ReadFile(mps_.paths()[mp] + kMountpathStateFile);
    if (!content.ok()) continue;  // absent, or on a broken disk: the other copies decide
    auto j = nlohmann::json::parse(*content, nullptr, false);
    if (!j.is_object() || !j.contains("version") || !j["version"].is_number_unsigned() ||
        !j.contains("disabled") || !j["disabled"].is_array()) {
      continue;
    }
    uint64_t v = j["version"].get<uint64_t>();
    if (v <= best) continue;
    best = v;
    disabled.clear();
    for (auto& p : j["disabled"]) {
      if (p.is_string()) disabled.push_back(p.get<std::string>());
    }
    auto id = [&j](const char* key) {
      auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    cluster_uuid_ = id("cluster_uuid");
    daemon_id_ = id("daemon_id");
    // Exact placement holds on only for the same set of mountpaths (HRW ranks by it).
    auto exact = j.find("placement_exact");
    auto listed = j.find("mountpaths");
    std::vector<std::string> was;
    if (listed != j.end() && listed->is_array()) {
      for (auto& p : *listed) {
        if (p.is_string()) was.push_back(p.get<std::string>());
      }
    }
    std::vector<std::string> now = mps_.paths();
    std::sort(was.begin(), was.end());
    std::sort(now.begin(), now.end());
    off_primary_ = !(exact != j.end() && exact->is_boolean() && exact->get<bool>() && was == now);
  }
  if (best == 0) off_primary_ = false;  // a new store (Open checks that it holds no data)
  std::lock_guard lock(mp_state_mu_);
  mp_state_version_ = best;
  for (auto& p : disabled) {
    if (auto mp = mps_.Find(p)) mps_.SetEnabled(*mp, false);
  }
  if (mps_.num_disabled() == mps_.size()) {
    for (size_t mp = 0; mp < mps_.size(); ++mp) mps_.SetEnabled(mp, true);  // never start with none
  }
  return Status::OK();
}

// REQUIRES: mp_state_mu_ held.
Status Store::SaveMountpathState() {
  nlohmann::json doc;
  doc["version"] = ++mp_state_version_;
  doc["cluster_uuid"] = cluster_uuid_;
  doc["daemon_id"] = daemon_id_;
  doc["disabled"] = nlohmann::json::array();
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) doc["disabled"].push_back(mps_.paths()[mp]);
  }
  doc["mountpaths"] = mps_.paths();
  doc["placement_exact"] = !off_primary_.load();
  std::string text = JsonText(doc);
  Status first;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    Status st = AtomicWriteFile(mps_.paths()[mp] + kMountpathStateFile, text, opts_.fsync);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

MountpathState Store::GetMountpaths() const {
  MountpathState out;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    (mps_.enabled(mp) ? out.available : out.disabled).push_back(mps_.paths()[mp]);
  }
  return out;
}

Status Store::DisableMountpath(const std::string& path, const std::string& reason) {
  auto mp = mps_.Find(path);
  if (!mp) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::lock_guard lock(mp_state_mu_);
  off_primary_ = true;  // from now on, a write may go to a lower-ranked mountpath
  if (!mps_.SetEnabled(*mp, false)) return Status::OK();
  LogError("mountpath " + mps_.paths()[*mp] + " disabled: " + reason);
  Status st = SaveMountpathState();
  if (!st.ok()) LogWarning("mountpath state not saved: " + st.message());
  return Status::OK();
}

Status Store::EnableMountpath(const std::string& path) {
  auto mp = mps_.Find(path);
  if (!mp) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::lock_guard lock(mp_state_mu_);
  if (mps_.enabled(*mp)) return Status::OK();
  const std::string& root = mps_.paths()[*mp];
  struct stat st{};
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError("cannot enable mountpath " + root + ": " + (errno ? std::strerror(errno) : "not a directory"));
  }
  AIS_RETURN_IF_ERROR(MkdirAll(mps_.WorkDir(*mp)));
  {
    std::lock_guard fl(fshc_mu_);
    roots_[*mp] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  AIS_RETURN_IF_ERROR(Reconcile(*mp));
  mps_.SetEnabled(*mp, true);
  LogInfo("mountpath " + root + " enabled");
  Status saved = SaveMountpathState();
  if (!saved.ok()) LogWarning("mountpath state not saved: " + saved.message());
  return buckets_.Persist();  // the BMD copy on it may be stale
}

Status Store::Reconcile(size_t mp) {
  for (const std::string& bucket : buckets_.Names()) {
    SortedWalker walker(mps_.ObjectsDir(mp, bucket), "", "");
    std::string name, path;
    for (;;) {
      auto more = walker.Next(&name, &path);
      if (!more.ok()) {
        if (more.status().IsNotFound()) break;  // no objects dir for this bucket there
        return more.status();
      }
      if (!*more) break;
      for (size_t m = 0; m < mps_.size(); ++m) {
        if (m == mp || !mps_.enabled(m)) continue;
        const std::string other = mps_.ObjectPath(m, bucket, name);
        if (::access(other.c_str(), F_OK) != 0) continue;
        std::lock_guard lock(StripeFor(bucket, name));
        auto here = ReadMetaAt(path);
        auto there = ReadMetaAt(other);
        if (!there.ok()) break;  // the copy in service stays; this one is shadowed below
        bool keep_here = here.ok() && (here->version > there->version ||
                                       (here->version == there->version && here->atime_ns > there->atime_ns));
        const std::string& loser = keep_here ? other : path;
        const Result<ObjectMeta>& lm = keep_here ? there : here;
        ::unlink(loser.c_str());
        Headers().ForgetPath(loser);
        if (lm.ok() && lm.value().chunked()) DropChunks(keep_here ? m : mp, bucket, lm.value().upload_id);
        break;
      }
    }
  }
  return Status::OK();
}

bool Store::CheckMountpath(size_t mp, bool write_probe) {
  if (!mps_.enabled(mp)) return false;
  const std::string& root = mps_.paths()[mp];
  RootId want;
  {
    std::lock_guard lock(fshc_mu_);
    want = roots_[mp];
  }
  std::string reason;
  struct stat st{};
  if (::stat(root.c_str(), &st) != 0) {
    reason = std::string("stat: ") + std::strerror(errno);
  } else if (static_cast<uint64_t>(st.st_dev) != want.dev || static_cast<uint64_t>(st.st_ino) != want.ino) {
    reason = "the directory was replaced or its filesystem unmounted";
  } else if (::stat(mps_.WorkDir(mp).c_str(), &st) != 0) {
    reason = "stat " + mps_.WorkDir(mp) + ": " + std::strerror(errno);
  } else if (write_probe) {
    std::string probe = mps_.WorkDir(mp) + "/fshc-" + RandomId(8) + ".tmp";
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
      char b = 0;
      if (::write(fd, &b, 1) != 1 || ::fsync(fd) != 0) err = errno;
      ::close(fd);
      ::unlink(probe.c_str());
    }
    if (err != 0 && err != ENOSPC && err != EDQUOT) reason = std::string("write probe: ") + std::strerror(err);
  }
  if (reason.empty()) return true;
  (void)DisableMountpath(root, reason);
  return false;
}

void Store::FshcLoop() {
  std::unique_lock lock(fshc_mu_);
  while (!fshc_cv_.wait_for(lock, std::chrono::milliseconds(opts_.fshc_interval_ms), [this] { return fshc_stop_; })) {
    lock.unlock();
    for (size_t mp = 0; mp < mps_.size(); ++mp) {
      if (mps_.enabled(mp)) (void)CheckMountpath(mp, false);
    }
    lock.lock();
  }
}

Result<UniqueFd> Store::OpenObjectFile(const std::string& bucket, const std::string& name, size_t* mp) {
  size_t primary = mps_.PrimaryFor(bucket, name);
  *mp = primary;
  auto fd = OpenFile(mps_.ObjectPath(primary, bucket, name), O_RDONLY);
  if (fd.ok() || !fd.status().IsNotFound() || !MayBeOffPrimary()) return fd;
  // Written while a better-ranked mountpath was disabled: on a later one in the ranking.
  for (size_t m : mps_.Ranked(bucket, name)) {
    if (m == primary || !mps_.enabled(m)) continue;
    auto other = OpenFile(mps_.ObjectPath(m, bucket, name), O_RDONLY);
    if (other.ok()) {
      *mp = m;
      return other;
    }
  }
  return fd;
}

std::optional<size_t> Store::LocateObject(const std::string& bucket, const std::string& name) {
  size_t primary = mps_.PrimaryFor(bucket, name);
  if (::access(mps_.ObjectPath(primary, bucket, name).c_str(), F_OK) == 0) return primary;
  if (!MayBeOffPrimary()) return std::nullopt;
  for (size_t m : mps_.Ranked(bucket, name)) {
    if (m == primary || !mps_.enabled(m)) continue;
    if (::access(mps_.ObjectPath(m, bucket, name).c_str(), F_OK) == 0) return m;
  }
  return std::nullopt;
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

Status Store::Recover() {
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    // Interrupted writes of the BMD, the state file and the header snapshot sit next to them
    // (AtomicWriteFile's "<file>.tmp.<n>").
    if (DIR* d = ::opendir(mps_.paths()[mp].c_str())) {
      while (dirent* de = ::readdir(d)) {
        std::string n = de->d_name;
        if (n.starts_with(".ais.") && n.find(".tmp.") != std::string::npos) ::unlink((mps_.paths()[mp] + "/" + n).c_str());
      }
      ::closedir(d);
    }
    std::string work = mps_.WorkDir(mp);
    DIR* d = ::opendir(work.c_str());
    if (d == nullptr) return Status::FromErrno(errno, "opendir " + work);
    std::vector<std::string> names;
    while (dirent* de = ::readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    ::closedir(d);
    for (auto& n : names) {
      std::string path = work + "/" + n;
      if (n == kQuarantineDir) continue;  // damaged objects the scrub set aside: kept
      if (!n.starts_with(kChunkMarkerPrefix)) {  // temp files and trash of destroyed buckets
        AIS_RETURN_IF_ERROR(RemoveTree(path));
        continue;
      }
      std::string upload_id = n.substr(std::strlen(kChunkMarkerPrefix));
      auto content = ReadFile(path);
      auto j = content.ok() ? nlohmann::json::parse(*content, nullptr, false) : nlohmann::json();
      if (!j.is_object() || !j.contains("bucket") || !j.contains("name")) {
        ::unlink(path.c_str());  // a marker torn before its rename never guarded a chunk
        continue;
      }
      std::string bucket = j["bucket"], name = j["name"];
      auto at = LocateObject(bucket, name);
      auto meta = at ? ReadMetaAt(mps_.ObjectPath(*at, bucket, name)) : Result<ObjectMeta>(Status::NotFound(name));
      if (!(meta.ok() && meta->upload_id == upload_id)) {
        for (size_t m = 0; m < mps_.size(); ++m) {
          if (mps_.enabled(m)) AIS_RETURN_IF_ERROR(RemoveTree(mps_.ChunkDir(m, bucket, upload_id)));
        }
      }
      ::unlink(path.c_str());
    }
  }
  return Status::OK();
}

std::mutex& Store::StripeFor(const std::string& bucket, const std::string& name) {
  uint64_t h = XXH64(name.data(), name.size(), XXH64(bucket.data(), bucket.size(), 0));
  return stripes_[h % stripes_.size()];
}

std::string Store::TempPath(size_t mp) { return mps_.WorkDir(mp) + "/" + RandomId(16) + ".tmp"; }

Status Store::WriteChunkMarker(size_t mp, const std::string& bucket, const std::string& name,
                               const std::string& upload_id) {
  nlohmann::json j = {{"bucket", bucket}, {"name", name}};
  return AtomicWriteFile(mps_.WorkDir(mp) + "/" + kChunkMarkerPrefix + upload_id, JsonText(j), opts_.fsync);
}

void Store::DropChunks(size_t mp, const std::string& bucket, const std::string& upload_id) {
  for (size_t m = 0; m < mps_.size(); ++m) {
    if (mps_.enabled(m)) (void)RemoveTree(mps_.ChunkDir(m, bucket, upload_id));
  }
  ::unlink((mps_.WorkDir(mp) + "/" + kChunkMarkerPrefix + upload_id).c_str());
}

Status Store::MakeChunkDir(size_t mp, const std::string& bucket, const std::string& upload_id) {
  const std::string bucket_dir = mps_.BucketDir(mp, bucket);
  if (::access(bucket_dir.c_str(), F_OK) != 0) {
    // Destroy drops the bucket from the registry before moving its dirs to trash.
    if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
    AIS_RETURN_IF_ERROR(MkdirAll(bucket_dir));  // a mountpath added after the bucket was created
  }
  const std::string chunk_dir = mps_.ChunkDir(mp, bucket, upload_id);
  for (const std::string& dir : {DirName(chunk_dir), chunk_dir}) {
    if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) continue;
    if (errno == ENOENT) return BucketRegistry::NotFound(bucket);
    return Status::FromErrno(errno, "mkdir " + dir);
  }
  return Status::OK();
}

Status Store::CommitFile(const std::string& bucket, size_t mp, const std::string& temp_path, int temp_fd,
                         bool inline_data, uint64_t data_offset, ObjectMeta* meta,
                         const std::optional<ObjectMeta>& expect, std::string_view body) {
  const std::string path = mps_.ObjectPath(mp, bucket, meta->name);
  std::optional<ObjectMeta> old;
  std::optional<size_t> old_mp;  // the current object lives on another mountpath (see Reconcile)
  {
    std::lock_guard lock(StripeFor(bucket, meta->name));
    auto cur = ReadMetaAt(path);
    if (cur.ok()) {
      old = std::move(*cur);
    } else if (!IsMissing(cur.status()) && cur.status().code() != Status::Code::kCorruption) {
      if (::access(path.c_str(), F_OK) == 0) return cur.status();
    } else if (IsMissing(cur.status()) && MayBeOffPrimary()) {
      auto at = LocateObject(bucket, meta->name);
      if (at && *at != mp) {
        auto o = ReadMetaAt(mps_.ObjectPath(*at, bucket, meta->name));
        if (o.ok()) {
          old = std::move(*o);
          old_mp = at;
        }
      }
    }
    if (expect) {
      if (!old || old->version != expect->version || old->upload_id != expect->upload_id) {
        return Status::Conflict(ObjectCname(bucket, meta->name) + " changed concurrently");
      }
      meta->version = expect->version;
    } else {
      meta->version = old ? old->version + 1 : 1;
    }
    uint64_t offset = data_offset;
    std::string header = EncodeObjectHeader(*meta, inline_data, &offset);
    if (offset != data_offset) return Status::Corruption("object header outgrew its reserved space");
    AIS_RETURN_IF_ERROR(body.empty() ? PwriteAll(temp_fd, header.data(), header.size(), 0)
                                     : PwritevAll(temp_fd, header, body, 0));
    if (opts_.fsync) AIS_RETURN_IF_ERROR(FsyncFd(temp_fd, temp_path));
    if (old && old->chunked()) AIS_RETURN_IF_ERROR(WriteChunkMarker(mp, bucket, meta->name, old->upload_id));
    // rename() needs the parent directories; a concurrent delete may rmdir them in between.
    int rc = -1;
    for (int attempt = 0; attempt < 4; ++attempt) {
      rc = ::rename(temp_path.c_str(), path.c_str());
      if (rc == 0 || errno != ENOENT) break;
      if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
      AIS_RETURN_IF_ERROR(MkdirAll(DirName(path)));
    }
    if (rc != 0) {
      if (errno == ENOTDIR || errno == EISDIR) {
        return Status::Conflict("object name \"" + meta->name + "\" conflicts with an existing object");
      }
      return Status::FromErrno(errno, "rename " + temp_path);
    }
    if (old_mp) {
      const std::string old_path = mps_.ObjectPath(*old_mp, bucket, meta->name);
      ::unlink(old_path.c_str());
      Headers().ForgetPath(old_path);
    }
    KeepHeader(path, temp_fd, meta);
    if (opts_.fsync) AIS_RETURN_IF_ERROR(FsyncDir(DirName(path)));
  }
  if (old && old->chunked()) DropChunks(mp, bucket, old->upload_id);
  return Status::OK();
}

Status Store::CommitChunked(const std::string& bucket, size_t mp, ObjectMeta* meta,
                            const std::optional<ObjectMeta>& expect) {
  std::string temp = TempPath(mp);
  auto fd = OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.status();
  Status st = CommitFile(bucket, mp, temp, fd->get(), false, 0, meta, expect);
  if (!st.ok()) ::unlink(temp.c_str());
  return st;
}

Status Store::CreateBucket(const std::string& bucket, const nlohmann::json& props) {
  return buckets_.Create(bucket, props);
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
  std::unique_ptr<ObjectWriter> w(new ObjectWriter(this, bucket, name, *props, std::move(opts)));
  AIS_RETURN_IF_ERROR(w->Init());
  return w;
}

Result<ObjectHandle> Store::Open(const std::string& bucket, const std::string& name) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  size_t mp = 0;
  return OpenWith(bucket, name, OpenObjectFile(bucket, name, &mp));
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
  int fd = ::openat(dirs.dirs_[mp].get(), ObjectRelPath(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && MayBeOffPrimary()) return OpenWith(bucket, name, OpenObjectFile(bucket, name, &mp), ahead, got);
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
  auto h = Open(bucket, name);
  if (!h.ok()) return h.status();
  return h->meta();
}

Status Store::Delete(const std::string& bucket, const std::string& name) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  ObjectMeta meta;
  size_t mp = 0;
  std::string path;
  {
    std::lock_guard lock(StripeFor(bucket, name));
    auto at = LocateObject(bucket, name);
    if (!at) return Status::NotFound(ObjNotFoundMessage(bucket, name));
    mp = *at;
    path = mps_.ObjectPath(mp, bucket, name);
    auto cur = ReadMetaAt(path);
    if (!cur.ok()) {
      if (::access(path.c_str(), F_OK) != 0) return Status::NotFound(ObjNotFoundMessage(bucket, name));
      return cur.status();
    }
    meta = std::move(*cur);
    if (meta.chunked()) AIS_RETURN_IF_ERROR(WriteChunkMarker(mp, bucket, name, meta.upload_id));
    if (::unlink(path.c_str()) != 0) return Status::FromErrno(errno, "unlink " + path);
    Headers().ForgetPath(path);
  }
  if (meta.chunked()) DropChunks(mp, bucket, meta.upload_id);
  // Best effort: prune now-empty parent directories (rmdir fails harmlessly on non-empty ones).
  std::string root = mps_.ObjectsDir(mp, bucket);
  for (std::string dir = DirName(path); dir.size() > root.size(); dir = DirName(dir)) {
    if (::rmdir(dir.c_str()) != 0) break;
  }
  return Status::OK();
}

Status Store::ListEach(const std::string& bucket, const ListQuery& q, const ListVisitor& visit) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  headers_loaded_.wait();  // a listing right after the start would read every header itself
  std::vector<SortedWalker> walkers;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (mps_.enabled(mp)) walkers.emplace_back(mps_.ObjectsDir(mp, bucket), q.prefix, q.after);
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
  size_t visited = 0;
  while (!heap.empty() && visited < q.limit) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const size_t at = heap.back().walker;
    SortedWalker& w = walkers[at];
    heap.pop_back();
    auto meta = q.headers ? w.Meta() : Result<const ObjectMeta*>(&no_header);
    if (meta.ok()) {
      visit(w.name(), **meta);
      ++visited;
    } else if (!IsMissing(meta.status())) {  // missing: deleted while listing
      return meta.status();
    }
    AIS_RETURN_IF_ERROR(advance(at));
  }
  return Status::OK();
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

// ---------------------------------------------------------------------------------------------
// Multipart upload

Result<std::string> Store::MpuCreate(const std::string& bucket, const std::string& name,
                                     std::vector<std::pair<std::string, std::string>> custom) {
  if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
  auto up = std::make_shared<MpuUpload>();
  up->bucket = bucket;
  up->name = name;
  up->id = RandomId(16);
  up->primary_mp = mps_.PrimaryFor(bucket, name);
  up->custom = std::move(custom);
  up->created_ns = NowNs();
  AIS_RETURN_IF_ERROR(WriteChunkMarker(up->primary_mp, bucket, name, up->id));
  std::lock_guard lock(uploads_mu_);
  uploads_[up->id] = up;
  return up->id;
}

Result<std::shared_ptr<MpuUpload>> Store::FindUpload(const std::string& bucket, const std::string& name,
                                                     const std::string& upload_id) {
  std::lock_guard lock(uploads_mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second->bucket != bucket || it->second->name != name) {
    return Status::NotFound(ObjectCname(bucket, name) + ": upload ID \"" + upload_id + "\" does not exist");
  }
  return it->second;
}

Result<std::unique_ptr<PartWriter>> Store::MpuPart(const std::string& bucket, const std::string& name,
                                                   const std::string& upload_id, uint32_t num, uint64_t size) {
  if (num < 1 || num > kMaxChunks) {
    return Status::InvalidArgument("invalid part number " + std::to_string(num) + " (expecting 1..9999)");
  }
  auto up = FindUpload(bucket, name, upload_id);
  if (!up.ok()) return up.status();
  size_t mp = mps_.ForChunk(upload_id, num);
  AIS_RETURN_IF_ERROR(MakeChunkDir(mp, bucket, upload_id));
  std::unique_ptr<PartWriter> w(new PartWriter());
  w->upload_ = *up;
  w->num_ = num;
  w->expected_ = size;
  w->final_path_ = mps_.ChunkPath(mp, bucket, upload_id, num);
  w->temp_path_ = w->final_path_ + "." + RandomId(8) + ".tmp";
  auto fd = OpenFile(w->temp_path_, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.status();
  w->fd_ = std::move(*fd);
  return w;
}

Result<MpuInfo> Store::MpuDescribe(const std::string& bucket, const std::string& name,
                                   const std::string& upload_id) {
  auto found = FindUpload(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  MpuInfo info{.name = up.name, .id = up.id, .created_ns = up.created_ns, .parts = {}};
  for (const auto& [num, size] : up.parts) {
    auto tag = up.tags.find(num);
    info.parts.push_back(MpuPartInfo{.num = num, .size = size, .tag = tag == up.tags.end() ? "" : tag->second});
  }
  return info;
}

std::vector<MpuInfo> Store::MpuList(const std::string& bucket) {
  std::vector<MpuInfo> out;
  {
    std::lock_guard lock(uploads_mu_);
    for (const auto& [id, up] : uploads_) {
      if (up->bucket == bucket) out.push_back(MpuInfo{.name = up->name, .id = id, .created_ns = up->created_ns, .parts = {}});
    }
  }
  std::sort(out.begin(), out.end(), [](const MpuInfo& a, const MpuInfo& b) {
    return a.name != b.name ? a.name < b.name : a.created_ns != b.created_ns ? a.created_ns < b.created_ns : a.id < b.id;
  });
  return out;
}

Status Store::MpuComplete(const std::string& bucket, const std::string& name, const std::string& upload_id,
                          std::vector<uint32_t> parts,
                          const std::vector<std::pair<std::string, std::string>>& extra_custom, ObjectMeta* out,
                          const WriteThroughFn& through) {
  auto found = FindUpload(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  // Wording as AIS (ais/tgtmpt.go, core/ufest.go): the SDK and users match on it.
  if (up.parts.empty()) {
    return Status::InvalidArgument(ObjectCname(bucket, name) + ": upload ID \"" + upload_id + "\": no chunks");
  }
  if (parts.size() != up.parts.size()) {
    return Status::NotSupported(ObjectCname(bucket, name) + ": partial completion is not allowed: requested " +
                                std::to_string(parts.size()) + " parts, have " + std::to_string(up.parts.size()));
  }
  std::sort(parts.begin(), parts.end());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != i + 1 || !up.parts.count(parts[i])) {
      std::string what = i > 0 && parts[i] == parts[i - 1] ? " (duplicate part " + std::to_string(parts[i]) + ")" : "";
      return Status::InvalidArgument(ObjectCname(bucket, name) + ": parts must be exactly 1.." +
                                     std::to_string(parts.size()) + ": got " + std::to_string(parts[i]) +
                                     " at position " + std::to_string(i) + what);
    }
  }
  auto props = GetBucket(bucket);
  if (!props.ok()) return props.status();
  ObjectMeta meta;
  meta.name = name;
  meta.upload_id = upload_id;
  meta.custom = up.custom;
  MergeCustomInto(&meta.custom, extra_custom);
  meta.atime_ns = NowNs();
  auto cksum = Checksummer::Create(props->checksum_type);
  if (!cksum.ok()) return cksum.status();
  std::vector<char> buf(kCopyBuf);
  std::vector<UniqueFd> fds;  // the parts, open for `through`
  std::vector<FileSegment> segs;
  for (auto& [num, size] : up.parts) {
    meta.chunk_sizes.push_back(size);
    meta.size += size;
    if (!*cksum && !through) continue;
    auto fd = OpenChunk(mps_, bucket, upload_id, num);
    if (!fd.ok()) return fd.status();
    if (*cksum) {
      // Parts may arrive in any order, so the whole-object checksum is computed here, in order.
      AIS_RETURN_IF_ERROR(StreamSegments({FileSegment{fd->get(), 0, size}}, buf, [&cksum](const char* p, size_t n) {
        (*cksum)->Update(p, n);
        return Status::OK();
      }));
    }
    segs.push_back(FileSegment{fd->get(), 0, size});
    fds.push_back(std::move(*fd));
  }
  if (*cksum) {
    meta.cksum_type = props->checksum_type;
    meta.cksum_value = (*cksum)->FinishHex();
  }
  if (through) {
    auto md = through(segs, meta.size);
    if (!md.ok()) return md.status();
    MergeCustomInto(&meta.custom, *md);
  }
  AIS_RETURN_IF_ERROR(CommitChunked(bucket, up.primary_mp, &meta, std::nullopt));
  if (out) *out = meta;
  up.finished = true;
  ::unlink((mps_.WorkDir(up.primary_mp) + "/" + kChunkMarkerPrefix + upload_id).c_str());
  std::lock_guard ul(uploads_mu_);
  uploads_.erase(upload_id);
  return Status::OK();
}

Status Store::MpuKeepOnly(const std::string& bucket, const std::string& name, const std::string& upload_id,
                          const std::vector<uint32_t>& parts) {
  auto found = FindUpload(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  std::lock_guard lock(up.mu);
  if (up.finished) return UploadGone(bucket, name, upload_id);
  for (size_t i = 0; i < parts.size(); ++i) {
    if ((i > 0 && parts[i] <= parts[i - 1]) || !up.parts.count(parts[i])) {
      return Status::InvalidArgument(ObjectCname(bucket, name) + ": part " + std::to_string(parts[i]) +
                                     " is not a committed part of upload \"" + upload_id + "\" (or out of order)");
    }
  }
  // Every copy of a dropped part goes first: a part is written on ForChunk's mountpath, or
  // another when that one was disabled, so each mountpath is tried.
  auto unlink_everywhere = [&](uint32_t num) {
    for (size_t m = 0; m < mps_.size(); ++m) ::unlink(mps_.ChunkPath(m, bucket, upload_id, num).c_str());
  };
  const std::set<uint32_t> kept(parts.begin(), parts.end());
  for (const auto& [num, size] : std::map<uint32_t, uint64_t>(up.parts)) {
    if (kept.count(num)) continue;
    unlink_everywhere(num);
    up.parts.erase(num);
    up.tags.erase(num);
  }
  // Ascending, so the k-th kept part (number >= k) moves down onto a number that is free: a
  // dropped part's, or a kept one's already moved. It goes where its new number is placed when
  // that is a rename away (one filesystem), else it keeps its mountpath (reads probe them all).
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto from = parts[i], to = static_cast<uint32_t>(i + 1);
    if (from == to) continue;
    size_t at = mps_.size();
    for (size_t m = 0; m < mps_.size() && at == mps_.size(); ++m) {
      if (::access(mps_.ChunkPath(m, bucket, upload_id, from).c_str(), F_OK) == 0) at = m;
    }
    if (at == mps_.size()) return Status::IOError(ObjectCname(bucket, name) + ": part " + std::to_string(from) + " is missing");
    const std::string path = mps_.ChunkPath(at, bucket, upload_id, from);
    const size_t placed = mps_.ForChunk(upload_id, to);
    const bool moved = placed != at && MakeChunkDir(placed, bucket, upload_id).ok() &&
                       ::rename(path.c_str(), mps_.ChunkPath(placed, bucket, upload_id, to).c_str()) == 0;
    if (!moved && ::rename(path.c_str(), mps_.ChunkPath(at, bucket, upload_id, to).c_str()) != 0) {
      return Status::FromErrno(errno, "rename " + path);
    }
    up.parts[to] = up.parts[from];
    up.tags[to] = std::move(up.tags[from]);
    up.parts.erase(from);
    up.tags.erase(from);
  }
  return Status::OK();
}

Status Store::MpuAbort(const std::string& bucket, const std::string& name, const std::string& upload_id) {
  auto found = FindUpload(bucket, name, upload_id);
  if (!found.ok()) return found.status();
  MpuUpload& up = **found;
  {
    std::lock_guard lock(up.mu);
    if (up.finished) return UploadGone(bucket, name, upload_id);
    up.finished = true;
  }
  DropChunks(up.primary_mp, bucket, upload_id);
  std::lock_guard ul(uploads_mu_);
  uploads_.erase(upload_id);
  return Status::OK();
}

Status Store::Rechunk(const std::string& bucket, const std::string& name, uint64_t chunk_size) {
  auto h = Open(bucket, name);
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

// Writes all of src's bytes into w; with `verify`, hashes them on the way and fails with
// kCorruption if they do not match src's stored checksum.
static Status WriteObjectBytes(const std::string& bucket, ObjectHandle& src, ObjectWriter& w, bool verify) {
  std::unique_ptr<Checksummer> ck;
  if (verify && !src.meta().cksum_type.empty() && !src.meta().cksum_value.empty()) {
    auto c = Checksummer::Create(src.meta().cksum_type);
    if (!c.ok()) return c.status();
    ck = std::move(*c);
  }
  auto segs = src.Slice(0, src.meta().size);
  if (!segs.ok()) return segs.status();
  std::vector<char> buf(kCopyBuf);
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

Status Store::CopyInto(ObjectHandle& src, ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through) {
  // The writer re-hashes what it copies and compares it with the source's stored checksum
  // (BeginPut options): damaged source bytes never become a new object with a fresh checksum.
  // A write-through uploads before that commit check, so then the bytes are verified on the way.
  AIS_RETURN_IF_ERROR(WriteObjectBytes(src.bucket_, src, w, /*verify=*/static_cast<bool>(through)));
  if (through) {
    std::vector<UniqueFd> fds;
    std::vector<FileSegment> segs;
    AIS_RETURN_IF_ERROR(w.OpenWritten(&fds, &segs));
    auto md = through(segs, w.written());
    if (!md.ok()) return md.status();
    w.MergeCustom(*md);
  }
  return w.Commit(out);
}

Status Store::Rewrite(const std::string& bucket, const std::string& name, ObjectHandle& h, PutOptions opts) {
  const ObjectMeta& meta = h.meta();
  opts.size = meta.size;
  if (!opts.force_chunk_size) opts.force_chunk_size = meta.chunked() ? meta.max_chunk_size() : 0;
  opts.client_cksum_type = meta.cksum_type;
  opts.client_cksum_value = meta.cksum_value;
  opts.cksum_from_store = true;
  opts.expect = meta;
  auto w = BeginPut(bucket, name, std::move(opts));
  if (!w.ok()) return w.status();
  ObjectMeta out;
  return CopyInto(h, **w, &out);
}

Status Store::SetCustom(const std::string& bucket, const std::string& name,
                        std::vector<std::pair<std::string, std::string>> md, bool replace) {
  auto h = Open(bucket, name);
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

Status Store::Copy(const std::string& src_bucket, const std::string& src_name, const std::string& dst_bucket,
                   const std::string& dst_name, const WriteThroughFn& through) {
  auto h = Open(src_bucket, src_name);
  if (!h.ok()) return h.status();
  PutOptions opts;
  opts.size = h->meta().size;
  opts.custom = h->meta().custom;
  opts.client_cksum_type = h->meta().cksum_type;
  opts.client_cksum_value = h->meta().cksum_value;
  opts.cksum_from_store = true;
  auto w = BeginPut(dst_bucket, dst_name, std::move(opts));
  if (!w.ok()) return w.status();
  ObjectMeta out;
  return CopyInto(*h, **w, &out, through);
}

// ---------------------------------------------------------------------------------------------
// Append

struct Store::AppendState {
  std::string bucket;
  std::string name;
  std::mutex mu;
  std::unique_ptr<ObjectWriter> writer;  // guarded by mu; null once flushed
  std::chrono::steady_clock::time_point last_used;  // guarded by Store::appends_mu_
};

Result<std::string> Store::Append(const std::string& bucket, const std::string& name, const std::string& handle,
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
    auto cur = Open(bucket, name);
    if (!cur.ok() && cur.status().code() != Status::Code::kNotFound) return cur.status();
    if (cur.ok()) opts.custom = cur->meta().custom;
    auto w = BeginPut(bucket, name, std::move(opts));
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

Status Store::AppendFlush(const std::string& bucket, const std::string& name, const std::string& handle,
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
  if (through) {
    std::vector<UniqueFd> fds;
    std::vector<FileSegment> segs;
    AIS_RETURN_IF_ERROR(w->OpenWritten(&fds, &segs));
    auto md = through(segs, w->written());
    if (!md.ok()) return md.status();
    w->MergeCustom(*md);
  }
  return w->Commit(meta);
}

// ---------------------------------------------------------------------------------------------
// ObjectWriter

ObjectWriter::ObjectWriter(Store* store, std::string bucket, std::string name, BucketProps props, PutOptions opts)
    : store_(store),
      bucket_(std::move(bucket)),
      name_(std::move(name)),
      props_(std::move(props)),
      opts_(std::move(opts)) {}

ObjectWriter::~ObjectWriter() {
  if (!done_) (void)Abort();
}

Status ObjectWriter::Init() {
  const Mountpaths& mps = store_->mps_;
  primary_mp_ = mps.PrimaryFor(bucket_, name_);
  meta_.name = name_;
  meta_.custom = opts_.custom;
  std::sort(meta_.custom.begin(), meta_.custom.end());
  auto ck = Checksummer::Create(props_.checksum_type);
  if (!ck.ok()) return ck.status();
  cksum_ = std::move(*ck);
  if (cksum_) meta_.cksum_type = props_.checksum_type;
  if (cksum_ && !opts_.client_cksum_type.empty() && !opts_.client_cksum_value.empty() &&
      opts_.client_cksum_type != props_.checksum_type) {
    auto cc = Checksummer::Create(opts_.client_cksum_type);
    if (!cc.ok()) return cc.status();
    client_cksum_ = std::move(*cc);
  }
  if (opts_.force_chunk_size) {
    chunk_size_ = *opts_.force_chunk_size;
  } else if (opts_.size && props_.ShouldChunk(*opts_.size)) {
    chunk_size_ = props_.effective_chunk_size();
  }
  if (chunk_size_ > 0 && opts_.size) {
    chunk_size_ = std::max(chunk_size_, (*opts_.size + kMaxChunks - 1) / kMaxChunks);  // at most 9999 chunks
  }
  if (chunk_size_ > 0) meta_.upload_id = RandomId(16);
  if (chunk_size_ == 0 && opts_.size && *opts_.size <= kBufferedMax) {
    if (!mps.enabled(primary_mp_)) return Status::IOError("no mountpaths available (all disabled)");
    buffering_ = true;
    buffered_.reserve(*opts_.size);
    return Status::OK();
  }
  if (chunk_size_ == 0) return OnPrimary([this] { return OpenTemp(); });
  return OnPrimary([this] { return store_->WriteChunkMarker(primary_mp_, bucket_, name_, meta_.upload_id); });
}

Status ObjectWriter::OnPrimary(const std::function<Status()>& open) {
  const Mountpaths& mps = store_->mps_;
  for (int attempt = 0;; ++attempt) {
    if (!mps.enabled(primary_mp_)) return Status::IOError("no mountpaths available (all disabled)");
    Status st = open();
    if (st.ok() || attempt > 0 || st.code() == Status::Code::kNoSpace || store_->CheckMountpath(primary_mp_)) {
      return st;
    }
    primary_mp_ = mps.PrimaryFor(bucket_, name_);
  }
}

Status ObjectWriter::Unbuffer() {
  AIS_RETURN_IF_ERROR(OnPrimary([this] { return OpenTemp(); }));
  buffering_ = false;
  Status st = PwriteAll(fd_.get(), buffered_.data(), buffered_.size(), data_offset_);
  std::string().swap(buffered_);
  return st.ok() ? st : CheckedWriteError(st);
}

Status ObjectWriter::OpenTemp() {
  temp_path_ = store_->TempPath(primary_mp_);
  auto fd = OpenFile(temp_path_, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) {
    temp_path_.clear();
    return fd.status();
  }
  fd_ = std::move(*fd);
  fd_mp_ = primary_mp_;
  data_offset_ = ReservedDataOffset(meta_);  // Write() puts the bytes after it (pwrite)
  return Status::OK();
}

Status ObjectWriter::OpenNextChunk() {
  const Mountpaths& mps = store_->mps_;
  if (fd_.valid() && store_->opts_.fsync) AIS_RETURN_IF_ERROR(FsyncFd(fd_.get(), "chunk"));
  auto num = static_cast<uint32_t>(meta_.chunk_sizes.size() + 1);
  if (num > kMaxChunks) return Status::InvalidArgument("object exceeds 9999 chunks");
  size_t mp = mps.ForChunk(meta_.upload_id, num);
  Result<UniqueFd> fd = Status::OK();
  for (int attempt = 0;; ++attempt) {
    Status st = store_->MakeChunkDir(mp, bucket_, meta_.upload_id);
    if (st.ok()) {
      fd = OpenFile(mps.ChunkPath(mp, bucket_, meta_.upload_id, num), O_WRONLY | O_CREAT | O_TRUNC);
      st = fd.status();
    }
    if (st.ok()) break;
    if (attempt > 0 || st.code() == Status::Code::kNoSpace || !store_->buckets_.Get(bucket_) ||
        store_->CheckMountpath(mp)) {
      return st;
    }
    mp = mps.ForChunk(meta_.upload_id, num);  // the health check disabled it: the next one
  }
  fd_ = std::move(*fd);
  fd_mp_ = mp;
  chunk_mps_.push_back(mp);
  meta_.chunk_sizes.push_back(0);
  chunk_fill_ = 0;
  return Status::OK();
}

Status ObjectWriter::Write(const void* data, size_t len) {
  if (done_) return Status::IOError("write after commit or abort");
  if (opts_.size && written_ + len > *opts_.size) return Status::InvalidArgument("body exceeds Content-Length");
  if (cksum_) cksum_->Update(data, len);
  if (client_cksum_) client_cksum_->Update(data, len);
  if (buffering_) {
    buffered_.append(static_cast<const char*>(data), len);
    written_ += len;
    return Status::OK();
  }
  if (chunk_size_ == 0) {
    Status st = PwriteAll(fd_.get(), data, len, data_offset_ + written_);
    if (!st.ok()) return CheckedWriteError(st);
    written_ += len;
    return Status::OK();
  }
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    if (!fd_.valid() || chunk_fill_ == chunk_size_) {
      Status st = OpenNextChunk();
      if (!st.ok()) {
        (void)Abort();
        return st;
      }
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, chunk_size_ - chunk_fill_));
    Status st = WriteAll(fd_.get(), p, n);
    if (!st.ok()) return CheckedWriteError(st);
    chunk_fill_ += n;
    meta_.chunk_sizes.back() += n;
    written_ += n;
    p += n;
    len -= n;
  }
  return Status::OK();
}

Status ObjectWriter::CheckedWriteError(Status st) {
  if (st.code() == Status::Code::kIOError) (void)store_->CheckMountpath(fd_mp_);
  (void)Abort();  // nothing partial stays behind, even before the writer is destroyed
  return st;
}

Status ObjectWriter::Commit(ObjectMeta* meta) {
  if (done_) return Status::IOError("commit after commit or abort");
  Status st;
  if (opts_.size && written_ != *opts_.size) {
    st = Status::InvalidArgument("received " + std::to_string(written_) + " of " + std::to_string(*opts_.size) +
                                 " bytes");
  }
  meta_.size = written_;
  if (st.ok() && cksum_) {
    meta_.cksum_value = cksum_->FinishHex();
    if (!opts_.client_cksum_value.empty() && !opts_.client_cksum_type.empty()) {
      std::string got = client_cksum_ ? client_cksum_->FinishHex() : meta_.cksum_value;
      if (got != opts_.client_cksum_value) {
        std::string msg = "BAD DATA CHECKSUM: " + ObjectCname(bucket_, name_) + ": " + opts_.client_cksum_type +
                          "(" + got + ") != " + opts_.client_cksum_type + "(" + opts_.client_cksum_value + ")";
        st = opts_.cksum_from_store ? Status::Corruption(std::move(msg)) : Status::InvalidArgument(std::move(msg));
      }
    }
  }
  meta_.atime_ns = opts_.expect ? opts_.expect->atime_ns : NowNs();
  if (st.ok() && buffering_) {
    // The header's space, as OpenTemp reserves it: the same layout as a streamed object's.
    st = OnPrimary([this] { return OpenTemp(); });
    if (st.ok()) {
      st = store_->CommitFile(bucket_, primary_mp_, temp_path_, fd_.get(), true, data_offset_, &meta_, opts_.expect,
                              buffered_);
    }
    if (st.ok()) temp_path_.clear();  // renamed into place
    if (st.code() == Status::Code::kIOError) (void)store_->CheckMountpath(primary_mp_);
  } else if (st.ok() && chunk_size_ == 0) {
    st = store_->CommitFile(bucket_, primary_mp_, temp_path_, fd_.get(), true, data_offset_, &meta_, opts_.expect);
    if (st.ok()) temp_path_.clear();  // renamed into place
  } else if (st.ok()) {
    if (fd_.valid() && store_->opts_.fsync) st = FsyncFd(fd_.get(), "chunk");
    fd_.reset();
    if (st.ok()) st = store_->CommitChunked(bucket_, primary_mp_, &meta_, opts_.expect);
    if (st.ok()) {
      ::unlink((store_->mps_.WorkDir(primary_mp_) + "/" + kChunkMarkerPrefix + meta_.upload_id).c_str());
    }
  }
  if (!st.ok()) {
    (void)Abort();
    return st;
  }
  done_ = true;
  fd_.reset();
  *meta = meta_;
  return Status::OK();
}

void ObjectWriter::MergeCustom(const std::vector<std::pair<std::string, std::string>>& md) {
  MergeCustomInto(&meta_.custom, md);
}

Status ObjectWriter::OpenWritten(std::vector<UniqueFd>* fds, std::vector<FileSegment>* segs) {
  if (done_) return Status::IOError("read-back after commit or abort");
  if (buffering_) AIS_RETURN_IF_ERROR(Unbuffer());
  const Mountpaths& mps = store_->mps_;
  auto open = [&](const std::string& path, uint64_t offset, uint64_t len) -> Status {
    auto fd = OpenFile(path, O_RDONLY);
    if (!fd.ok()) return fd.status();
    segs->push_back({fd->get(), offset, len});
    fds->push_back(std::move(*fd));
    return Status::OK();
  };
  if (chunk_size_ == 0) return open(temp_path_, data_offset_, written_);
  for (size_t k = 0; k < meta_.chunk_sizes.size(); ++k) {
    auto num = static_cast<uint32_t>(k + 1);
    AIS_RETURN_IF_ERROR(open(mps.ChunkPath(chunk_mps_[k], bucket_, meta_.upload_id, num), 0, meta_.chunk_sizes[k]));
  }
  return Status::OK();
}

Status ObjectWriter::Abort() {
  done_ = true;
  fd_.reset();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  if (!meta_.upload_id.empty()) store_->DropChunks(primary_mp_, bucket_, meta_.upload_id);
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// PartWriter

PartWriter::~PartWriter() {
  if (!done_) ::unlink(temp_path_.c_str());
}

Status PartWriter::Write(const void* data, size_t len) {
  if (written_ + len > expected_) return Status::InvalidArgument("body exceeds Content-Length");
  AIS_RETURN_IF_ERROR(WriteAll(fd_.get(), data, len));
  written_ += len;
  return Status::OK();
}

Status PartWriter::Commit(std::string tag) {
  if (written_ != expected_) {
    return Status::InvalidArgument("part " + std::to_string(num_) + ": received " + std::to_string(written_) +
                                   " of " + std::to_string(expected_) + " bytes");
  }
  std::lock_guard lock(upload_->mu);
  if (upload_->finished) return Status::NotFound("upload ID \"" + upload_->id + "\" was already completed or aborted");
  fd_.reset();
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) return Status::FromErrno(errno, "rename part");
  done_ = true;
  upload_->parts[num_] = expected_;
  upload_->tags[num_] = std::move(tag);
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Reading object bytes

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

// ---------------------------------------------------------------------------------------------
// ObjectHandle

Status ObjectHandle::OpenAll() {
  auto segs = Slice(0, meta_.size);
  if (!segs.ok()) return segs.status();
  all_ = std::move(*segs);
  starts_.clear();
  uint64_t pos = 0;
  for (const auto& s : all_) {
    starts_.push_back(pos);
    pos += s.len;
  }
  return Status::OK();
}

std::vector<FileSegment> ObjectHandle::Segments(uint64_t start, uint64_t len) const {
  std::vector<FileSegment> out;
  if (len == 0) return out;
  auto it = std::upper_bound(starts_.begin(), starts_.end(), start);
  size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
  const uint64_t end = start + len;
  for (; i < all_.size() && starts_[i] < end; ++i) {
    uint64_t s = std::max(start, starts_[i]);
    uint64_t e = std::min(end, starts_[i] + all_[i].len);
    out.push_back({all_[i].fd, all_[i].offset + (s - starts_[i]), e - s});
  }
  return out;
}

Status ObjectHandle::ReadAt(uint64_t start, void* buf, size_t len) const {
  return ReadSegments(Segments(start, len), static_cast<char*>(buf));
}

Result<std::vector<FileSegment>> ObjectHandle::Slice(uint64_t start, uint64_t len) {
  std::vector<FileSegment> out;
  if (len == 0) return out;
  if (!meta_.chunked()) {
    out.push_back({primary_.get(), data_offset_ + start, len});
    return out;
  }
  uint64_t chunk_start = 0;
  const uint64_t end = start + len;
  for (size_t i = 0; i < meta_.chunk_sizes.size() && chunk_start < end; ++i) {
    uint64_t chunk_end = chunk_start + meta_.chunk_sizes[i];
    if (chunk_end > start) {
      auto num = static_cast<uint32_t>(i + 1);
      auto it = chunks_.find(num);
      if (it == chunks_.end()) {
        auto fd = OpenChunk(*mps_, bucket_, meta_.upload_id, num);
        const std::string what = ObjectCname(bucket_, meta_.name) + ": chunk " + std::to_string(num);
        struct stat st {};
        if (!fd.ok()) {
          if (!fd.status().IsNotFound()) return fd.status();
          // Gone with its object (overwritten or deleted: the object file we hold is unlinked), or lost.
          if (::fstat(primary_.get(), &st) == 0 && st.st_nlink == 0) {
            return Status::Conflict("object was overwritten during the read");
          }
          return Status::Corruption(what + " is missing");
        }
        if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "fstat " + what);
        if (static_cast<uint64_t>(st.st_size) != meta_.chunk_sizes[i]) {
          return Status::Corruption(what + " is " + std::to_string(st.st_size) + " bytes, its manifest says " +
                                    std::to_string(meta_.chunk_sizes[i]));
        }
        it = chunks_.emplace(num, std::move(*fd)).first;
      }
      uint64_t s = std::max(start, chunk_start);
      uint64_t e = std::min(end, chunk_end);
      out.push_back({it->second.get(), s - chunk_start, e - s});
    }
    chunk_start = chunk_end;
  }
  return out;
}

}  // namespace ais
