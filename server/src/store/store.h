// Store: buckets and objects on N mountpaths; the one door the rest of the server uses. Knows no
// HTTP. It owns its rooms, each stating its invariant at its top:
//   volume.h          Volume: mountpaths in service, their health (FSHC), the node's identity
//   bucket_registry.h BucketRegistry: the BMD
//   committer.h       Committer: the commit protocol (the only way an object file changes) and
//                     startup recovery
//   object_writer.h   ObjectWriter: one PUT, up to its commit
//   object_handle.h   ObjectHandle: one committed version, open for reading
//   multipart.h       MultipartUploads: parts written as chunks, completed by one commit
//   rewriter.h        Rewriter: copy, rechunk, custom metadata, append
//   store_scrub.cc    the scrub's check of one object, and quarantine
//   capacity.h        Capacity: filesystem usage, the space config, writes refused when full
//   access_times.h    AccessTimes: when objects were last read (eviction's order), in memory
//   mirror.h          Mirror: the extra copies of objects in mirrored buckets (n-way mirror)
// Startup (Store::Open) runs Volume::Open, loads the BMD, runs recovery, and only then serves.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/access_times.h"
#include "store/bck.h"
#include "store/bucket_registry.h"
#include "store/capacity.h"
#include "store/committer.h"
#include "store/mirror.h"
#include "util/file_segment.h"
#include "store/mountpaths.h"
#include "store/multipart.h"
#include "store/object_handle.h"
#include "store/object_meta.h"
#include "store/object_writer.h"
#include "store/rewriter.h"
#include "store/volume.h"
#include "util/bounded_queue.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

class SortedWalker;

struct StoreOptions {
  std::vector<std::string> mountpaths;
  bool fsync = false;  // durability: fdatasync data and directories before each commit
  // Filesystem health checker period (0: check only after I/O errors).
  int fshc_interval_ms = 1000;
  // The smallest lru.dont_evict_time the space config takes (AIS: 1h; lower only for tests).
  std::chrono::milliseconds lru_min_dont_evict = SpaceConfig::kAisMinDontEvictTime;
  // How often the header snapshots are saved while the store runs, when the headers changed
  // (0: only by SaveHeaderSnapshots at a clean stop).
  std::chrono::milliseconds header_snapshot_interval{60'000};
};

// The objects directories of one bucket, held open for many Opens (GetBatch): an object is then
// opened relative to its directory, without walking the mountpath and bucket part of its path
// each time. Bound to the bucket's incarnation: once the bucket is re-created, Open through it
// takes the full path again (a destroyed bucket is kNotFound either way). Thread-safe (read-only).
class BucketDirs {
 private:
  friend class Store;
  std::string bucket_;
  uint64_t bid_ = 0;
  int64_t created_ns_ = 0;
  std::vector<UniqueFd> dirs_;  // per mountpath; invalid where the directory did not exist yet
};

struct ListQuery {
  std::string prefix;
  std::string after;  // exclusive
  size_t limit = 10000;
  bool headers = true;  // false: names only (ListEach visits an empty header, reads none)
};

// What Store::ForEachObject walks: the objects n with n.starts_with(prefix) && n > after.
struct ObjectWalk {
  std::string prefix;
  std::string after;
  bool headers = true;          // false: every object is visited with an empty header, none is read
  std::function<bool()> stop;   // if set, asked before each object: true ends the walk (OK)
  // An object whose header cannot be decoded (kCorruption) is not visited: the walk goes on. If
  // set, this is told of it (its error ends the walk); else the store counts and logs it
  // (Store::damaged_skipped). Either way the scrub is what quarantines it.
  std::function<Status(const std::string& name, const Status& why)> damaged = nullptr;
};

// One object file a walk found; valid during the visit only.
class WalkedObject {
 public:
  WalkedObject(const SortedWalker& walker, const ObjectMeta& meta, size_t mp);
  // One the walkers missed: it moved while they ran, to `path` on `mp`.
  WalkedObject(const std::string& name, std::string path, const ObjectMeta& meta, size_t mp)
      : name_(name), walker_(nullptr), path_(std::move(path)), meta_(meta), mp_(mp) {}
  const std::string& name() const { return name_; }
  const ObjectMeta& meta() const { return meta_; }  // its name is empty (name() has it)
  size_t mp() const { return mp_; }                 // the mountpath the file is on
  std::string path() const;                         // the object file (or the copy) visited
  // meta() with its name set: a copy to keep.
  ObjectMeta Named() const;

 private:
  const std::string& name_;
  const SortedWalker* walker_;  // path() is its file; null: path_ is
  std::string path_;
  const ObjectMeta& meta_;
  const size_t mp_;
};

class Store {
 public:
  // Creates missing directories, loads the BMD and runs crash recovery.
  static Result<std::unique_ptr<Store>> Open(StoreOptions opts);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Writes the object headers the server knows to a snapshot on each mountpath, read at the next
  // Open: the first listing after a restart then opens no object file whose header was known
  // (HeaderCache::Save). Call once no request runs any more, just before the store goes. While
  // the store runs they are also saved every header_snapshot_interval, so that the first listing
  // after a crash is fast too; this last save stops those.
  Status SaveHeaderSnapshots();

  const Mountpaths& mountpaths() const { return mps_; }
  // The BMD, read-only (Get, Access, Names); it changes only through the bucket calls below.
  const BucketRegistry& buckets() const { return buckets_; }

  Status CreateBucket(const std::string& bucket, const nlohmann::json& props);
  // Patches the bucket's props (BucketRegistry::Update).
  Status UpdateBucket(const std::string& bucket, const nlohmann::json& patch);
  Status DestroyBucket(const std::string& bucket);
  Result<BucketProps> GetBucket(const std::string& bucket) const;

  Result<std::unique_ptr<ObjectWriter>> BeginPut(const std::string& bucket, const std::string& name,
                                                 PutOptions opts);
  Result<ObjectMeta> Head(const std::string& bucket, const std::string& name);
  Result<ObjectHandle> Open(const std::string& bucket, const std::string& name);
  // Open() of `name` in the bucket of `dirs`, relative to its directories; also reads the
  // object's first bytes into `ahead` with its header when it can (ReadObjectHeader): *got bytes
  // of the object, from its start, are then in ahead[0, *got) (`got` may be null when `ahead` is
  // empty).
  Result<ObjectHandle> Open(const BucketDirs& dirs, const std::string& name, std::span<char> ahead = {},
                            size_t* got = nullptr);
  Result<BucketDirs> OpenBucketDirs(const std::string& bucket);
  // The re-open rule of readers: runs `use` on `first` (a handle `reopen` opened); when `use`
  // fails with kConflict (a chunk vanished: the object was overwritten during the read), opens
  // the object again with `reopen` and runs `use` on that, up to kOpenRetries times. Returns the
  // handle `use` succeeded on, or the first error that is not a conflict.
  // (A template: the GET path pays for no std::function.)
  static constexpr int kOpenRetries = 3;
  template <typename Reopen, typename Use>
  static Result<ObjectHandle> OpenReading(Result<ObjectHandle> first, const Reopen& reopen, const Use& use) {
    for (int attempt = 0;; ++attempt) {
      if (!first.ok()) return first.status();
      Status st = use(*first);
      if (st.ok()) return first;
      if (st.code() != Status::Code::kConflict || attempt >= kOpenRetries) return st;
      first = reopen();
    }
  }
  // bucket/name with every file open (ObjectHandle::OpenAll), to share between threads.
  Result<std::shared_ptr<const ObjectHandle>> OpenShared(const std::string& bucket, const std::string& name);
  // The same for a handle `reopen` opened (and opens again on a conflict).
  static Result<std::shared_ptr<const ObjectHandle>> OpenShared(Result<ObjectHandle> first,
                                                                const std::function<Result<ObjectHandle>()>& reopen);
  Status Delete(const std::string& bucket, const std::string& name);
  // Eviction of a cached object (the lru job): removes bucket/name only if it still is
  // `version` and was not read after `seen_atime_ns` (AccessTime); else kConflict and nothing
  // changes. A reader holding an ObjectHandle keeps its bytes (its files stay open).
  // *bytes: the object's size.
  Status Evict(const std::string& bucket, const std::string& name, uint64_t version, int64_t seen_atime_ns,
               uint64_t* bytes);
  // When the object was last read or written: the later of its header's atime and AccessTimes.
  int64_t AccessTime(const std::string& bucket, const ObjectMeta& meta) const {
    return std::max(meta.atime_ns, atimes_.Get(bucket, meta.name));
  }
  // Filesystem usage, the space config, and the check every write passes (Capacity).
  Capacity& capacity() { return capacity_; }
  const Capacity& capacity() const { return capacity_; }
  // Up to q.limit objects in name order: visit(name, header) with the header's name empty, both
  // valid during the call only. Headers are read once and kept with their directory's sorted
  // entries (SortedDirCache), so a listing of unchanged directories opens no object file; with
  // !q.headers none is read.
  using ListVisitor = std::function<void(const std::string& name, const ObjectMeta& meta)>;
  Status ListEach(const std::string& bucket, const ListQuery& q, const ListVisitor& visit);
  Result<std::vector<ObjectMeta>> List(const std::string& bucket, const ListQuery& q);
  // The one walk of a bucket's objects: every object file on the enabled mountpaths, merged in
  // name order (a name on two mountpaths is visited twice), headers as ListEach reads them. In a
  // mirrored bucket an object whose file is missing is visited once by a copy (mirror.h). An
  // object deleted meanwhile is skipped; a visit that fails ends the walk with its status.
  // kBucketNotFound for a bucket that is not (or no longer) there.
  using ObjectVisitor = std::function<Status(const WalkedObject& obj)>;
  Status ForEachObject(const std::string& bucket, const ObjectWalk& walk, const ObjectVisitor& visit);
  // Objects walks skipped for a damaged header since the start (ObjectWalk::damaged unset).
  uint64_t damaged_skipped() const { return damaged_skipped_.load(std::memory_order_relaxed); }

  // Multipart upload (MultipartUploads).
  Result<std::string> MpuCreate(const std::string& bucket, const std::string& name,
                                std::vector<std::pair<std::string, std::string>> custom) {
    return uploads_.Create(bucket, name, std::move(custom));
  }
  Result<std::unique_ptr<PartWriter>> MpuPart(const std::string& bucket, const std::string& name,
                                              const std::string& upload_id, uint32_t num, uint64_t size) {
    AIS_RETURN_IF_ERROR(capacity_.CheckWrite());
    return uploads_.Part(bucket, name, upload_id, num, size);
  }
  Status MpuComplete(const std::string& bucket, const std::string& name, const std::string& upload_id,
                     std::vector<uint32_t> parts,
                     const std::vector<std::pair<std::string, std::string>>& extra_custom = {},
                     ObjectMeta* out = nullptr, const WriteThroughFn& through = {}) {
    return uploads_.Complete(bucket, name, upload_id, std::move(parts), extra_custom, out, through);
  }
  Status MpuKeepOnly(const std::string& bucket, const std::string& name, const std::string& upload_id,
                     const std::vector<uint32_t>& parts) {
    return uploads_.KeepOnly(bucket, name, upload_id, parts);
  }
  Result<MpuInfo> MpuDescribe(const std::string& bucket, const std::string& name, const std::string& upload_id) {
    return uploads_.Describe(bucket, name, upload_id);
  }
  std::vector<MpuInfo> MpuList(const std::string& bucket) { return uploads_.List(bucket); }
  Status MpuAbort(const std::string& bucket, const std::string& name, const std::string& upload_id) {
    return uploads_.Abort(bucket, name, upload_id);
  }

  // Copies, rewrites and appends (Rewriter).
  Status Rechunk(const std::string& bucket, const std::string& name, uint64_t chunk_size) {
    return rewriter_.Rechunk(bucket, name, chunk_size);
  }
  Status SetCustom(const std::string& bucket, const std::string& name,
                   std::vector<std::pair<std::string, std::string>> md, bool replace) {
    return rewriter_.SetCustom(bucket, name, std::move(md), replace);
  }
  Status Copy(const std::string& src_bucket, const std::string& src_name, const std::string& dst_bucket,
              const std::string& dst_name, const WriteThroughFn& through = {}) {
    return rewriter_.Copy(src_bucket, src_name, dst_bucket, dst_name, through);
  }
  Result<std::string> Append(const std::string& bucket, const std::string& name, const std::string& handle,
                             const std::function<Status(ObjectWriter&)>& write_body) {
    return rewriter_.Append(bucket, name, handle, write_body);
  }
  Status AppendFlush(const std::string& bucket, const std::string& name, const std::string& handle,
                     ObjectMeta* meta, const WriteThroughFn& through = {}) {
    return rewriter_.AppendFlush(bucket, name, handle, meta, through);
  }

  // n-way mirror (mirror.h). Brings bucket/name to `copies` copies (1: none), under its stripe
  // lock: the object file must open whole (header, layout, every chunk), else it is restored
  // from a good copy (checksum verified); copies that are missing, damaged (header or layout)
  // or of another version are rewritten from the object; copies off their slots are removed.
  // kNotFound if there is neither object nor copy. *written: files written.
  Status SyncCopies(const std::string& bucket, const std::string& name, size_t copies, size_t* written = nullptr);
  // SyncCopies. REQUIRES: the object's stripe lock held.
  Status SyncCopiesLocked(const std::string& bucket, const std::string& name, size_t copies, size_t* written);
  // A copy of bucket/name other than the file `bad` reads (a whole-object read found its
  // checksum wrong), itself checksum-verified; queues a repair of the object. kNotFound if none.
  Result<ObjectHandle> OpenGoodCopy(const std::string& bucket, const std::string& name, const ObjectHandle& bad);
  // Repairs of objects that a read found missing or damaged, done in the background (bounded:
  // kRepairQueue waiting; more are dropped and counted) and dropped.
  static constexpr size_t kRepairQueue = 4096;
  // The mountpaths holding bucket/name: the object file's first, then its copies'.
  std::vector<std::string> CopyLocations(const std::string& bucket, const std::string& name) const;
  void QueueRepair(const std::string& bucket, const std::string& name);
  uint64_t repairs_done() const { return repairs_done_.load(std::memory_order_relaxed); }
  uint64_t repairs_dropped() const { return repairs_dropped_.load(std::memory_order_relaxed); }

  // Mountpaths and node identity (Volume).
  MountpathState GetMountpaths() const { return volume_.Get(); }
  const std::string& cluster_uuid() const { return volume_.cluster_uuid(); }
  const std::string& daemon_id() const { return volume_.daemon_id(); }
  Status DisableMountpath(const std::string& path, const std::string& reason, bool resilver = true) {
    return volume_.Disable(path, reason, resilver);
  }
  // Checks the mountpath is healthy, removes duplicates of objects written elsewhere while it was
  // disabled (Committer::Reconcile), then enables it. OK if already enabled.
  Status EnableMountpath(const std::string& path);
  // Run-time changes of the set (Volume::Attach, Volume::Detach); the BMD goes to a new mountpath.
  Status AttachMountpath(const std::string& path);
  Status DetachMountpath(const std::string& path, bool resilver) { return volume_.Detach(path, resilver); }
  // Told of every change of the mountpaths (Volume::set_on_change): the server starts a resilver.
  void SetOnMountpathsChanged(std::function<void(bool resilver)> fn) { volume_.set_on_change(std::move(fn)); }

  // Resilver (store_resilver.cc). One object of bucket to where placement wants it now, under its
  // stripe lock: its newest object file moved to its primary mountpath (Committer::Move; older
  // duplicates removed), its chunks moved off mountpaths that take nothing new (leaving), and in
  // a mirrored bucket its copies brought to the bucket's count on their slots (SyncCopies).
  // Reads go on meanwhile: the object is whole on one mountpath or another at every moment.
  // OK (nothing done) if the object is gone. *moved: files moved or written; *bytes: their bytes.
  Status ResilverObject(const std::string& bucket, const std::string& name, size_t* moved, uint64_t* bytes);
  // A resilver over the mountpaths as they are at mountpath_changes() == `seen`, started at
  // late_writes() == `late_seen`, finished: mountpaths that were leaving are detached, and no
  // resilver is pending (Volume::ResilverDone).
  // False (nothing done) if a later change or a write onto a leaving mountpath came meanwhile
  // (Volume::ResilverDone): the caller runs another pass.
  uint64_t mountpath_changes() const { return volume_.changes(); }
  uint64_t late_writes() const { return volume_.late_writes(); }
  bool ResilverDone(uint64_t seen, uint64_t late_seen) { return volume_.ResilverDone(seen, late_seen); }
  bool resilver_pending() const { return volume_.resilver_pending(); }
  bool CheckMountpath(size_t mp, bool write_probe = true) { return volume_.Check(mp, write_probe); }

  // Scrub (store_scrub.cc): checks the object file at `path` on mountpath `mp` (as a walk of
  // bucket's objects found it: WalkedObject): header, layout, chunk files and content checksum.
  // A damaged object is quarantined and *damage says what was wrong; *damage stays empty for a
  // sound object or one that went away meanwhile. *bytes: the bytes read.
  Status ScrubObject(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                     std::string* damage, uint64_t* bytes);
  // Removes the work dirs' stale temp files (Committer::RemoveStaleTemps).
  Status RemoveStaleTemps(std::chrono::seconds age, const std::function<bool()>& stop,
                          const std::function<void(uint64_t bytes)>& removed) {
    return committer_.RemoveStaleTemps(age, stop, removed);
  }

  // Removes chunk directories older than `age` that no object references and no marker
  // guards (a write or multipart upload that died without its cleanup), in every bucket.
  Status RemoveOrphanedChunks(std::chrono::seconds age, const std::function<bool()>& stop,
                              const std::function<void(uint64_t bytes)>& removed);
  // Removes deleted buckets' leftovers (Committer::RemoveLeftovers).
  Status RemoveLeftovers(std::chrono::seconds age, const std::function<bool()>& stop,
                         const std::function<void(uint64_t bytes)>& removed) {
    return committer_.RemoveLeftovers(age, stop, removed);
  }

  // The work dir entry that holds quarantined objects (<mp>/.ais.work/quarantine/<id>/).
  static constexpr const char* kQuarantineDir = Committer::kQuarantineDir;

  static std::string ObjNotFoundMessage(const std::string& bucket, const std::string& name) {
    return ais::ObjNotFoundMessage(bucket, name);
  }

 private:
  explicit Store(StoreOptions opts);
  // Reads each mountpath's header snapshot into Headers() (run on header_loader_).
  void LoadHeaderSnapshots();
  // Writes each enabled mountpath's snapshot, leaving out directories changed within settle_ns
  // (counted in `unsettled`, when given).
  Status SaveSnapshots(int64_t settle_ns, size_t* unsettled = nullptr);
  // Saves the snapshots every `interval` when the headers changed, until StopSnapshotSaver.
  void SnapshotSaverLoop(std::chrono::milliseconds interval);
  void StopSnapshotSaver();
  // A walk skipped the object file `path` of bucket/name: counted, and logged once per file.
  void NoteDamaged(const std::string& bucket, const std::string& name, const std::string& path, const Status& why);
  // Where bucket/name's object file is now, else a copy of it (its header with an empty name, the
  // mountpath, the file): for a walk whose walkers missed it while it moved. kNotFound if gone.
  struct FoundFile {
    ObjectMeta meta;
    size_t mp;
    std::string path;
  };
  Result<FoundFile> FindFile(const std::string& bucket, const std::string& name);
  // Moves a damaged object out of the namespace into <mp>/.ais.work/quarantine/<id>/ (its
  // chunk directories into the same <id> on their mountpaths), if the object file at `path`
  // still is file (dev, ino); kConflict if it was replaced meanwhile. Nothing is deleted.
  Status Quarantine(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                    uint64_t dev, uint64_t ino, const std::string& upload_id, const std::string& reason);
  // Open without recording a read (Head).
  Result<ObjectHandle> OpenQuiet(const std::string& bucket, const std::string& name);
  // The rest of Open once `fd` (the object file, if it opened) is known; in a mirrored bucket,
  // a copy when the object file is missing, damaged or (chunked) a chunk is (OpenCopy).
  // `mp`: where `fd` is (or was looked for).
  Result<ObjectHandle> OpenWith(const std::string& bucket, const std::string& name, Result<UniqueFd> fd, size_t mp,
                                std::span<char> ahead = {}, size_t* got = nullptr);
  // A mirrored object's read goes to the least busy of its files (Mountpaths::reading): `h`, the
  // object file on `mp`, or a copy of the same version on one of its slots with fewer reads in
  // flight (then *got = 0: `ahead` holds nothing of it). `h` counts as a read there while it lives.
  void ReadLeastBusy(const std::string& bucket, const std::string& name, size_t mp, ObjectHandle& h, size_t* got);

  // The rooms, in the order they are built (each uses those before it); constant after Open.
  Volume volume_;
  const Mountpaths& mps_;  // volume_'s
  Capacity capacity_;
  AccessTimes atimes_;
  BucketRegistry buckets_;
  Mirror mirror_;
  Committer committer_;
  MultipartUploads uploads_;
  Rewriter rewriter_;
  // The object file (or copy) `fd` as a handle: header decoded, naming `name`, layout checked.
  Result<ObjectHandle> OpenFileHandle(const std::string& bucket, const std::string& name, Result<UniqueFd> fd,
                                      std::span<char> ahead = {}, size_t* got = nullptr);
  // The first copy of bucket/name (in HRW order) that opens sound and is not the file
  // (dev, ino) `skip`; with `verify`, its checksum must match too. kNotFound if none.
  Result<ObjectHandle> OpenCopy(const std::string& bucket, const std::string& name, std::pair<uint64_t, uint64_t> skip,
                                bool verify);
  void RepairLoop();

  std::thread header_loader_;  // LoadHeaderSnapshots, from Open until it is done
  std::shared_future<void> headers_loaded_;  // ready once header_loader_ is done
  std::thread snapshot_saver_;               // SnapshotSaverLoop, when an interval is set
  std::mutex saver_mu_;
  std::condition_variable saver_cv_;
  bool saver_stop_ = false;  // guarded by saver_mu_
  std::atomic<uint64_t> damaged_skipped_{0};
  std::mutex damaged_mu_;
  std::set<std::string> damaged_logged_;  // object files NoteDamaged logged (bounded); guarded by damaged_mu_
  BoundedQueue<std::pair<std::string, std::string>> repairs_{kRepairQueue};  // bucket, name
  std::thread repairer_;  // RepairLoop, from Open until the store goes
  std::atomic<uint64_t> repairs_done_{0};
  std::atomic<uint64_t> repairs_dropped_{0};
};

}  // namespace ais
