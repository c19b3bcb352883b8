// Store: buckets and objects on N mountpaths. Knows no HTTP.
//
// Commit protocol (the only way an object becomes visible): bytes go to a temp file in the
// primary mountpath's work dir (monolithic) or to chunk files named by a fresh upload id (chunked,
// guarded by a chunk marker in the work dir); then, under the object's stripe lock, one rename()
// puts the object file in place. Startup recovery deletes temp files and every chunk directory
// whose marker names an upload that the committed object file does not reference.
// A committed object file is never written in place (a change renames a new one over it, or
// unlinks it): listings keep the headers they read on that (sorted_walker.h).
#pragma once

#include <array>
#include <condition_variable>
#include <functional>
#include <future>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/bck.h"
#include "store/bucket_registry.h"
#include "store/mountpaths.h"
#include "store/object_meta.h"
#include "util/checksum.h"
#include "util/file.h"
#include "util/file_segment.h"
#include "util/status.h"

namespace ais {

struct StoreOptions {
  std::vector<std::string> mountpaths;
  bool fsync = false;  // durability: fdatasync data and directories before each commit
  // Filesystem health checker period (0: check only after I/O errors).
  int fshc_interval_ms = 1000;
};

// What GET /v1/daemon?what=mountpaths reports.
struct MountpathState {
  std::vector<std::string> available;
  std::vector<std::string> disabled;
};

struct PutOptions {
  std::optional<uint64_t> size;  // Content-Length when known; needed to choose chunking
  std::vector<std::pair<std::string, std::string>> custom;
  std::string client_cksum_type;  // validate against this if both are set
  std::string client_cksum_value;
  // The expected checksum is a stored object's (copy, rewrite): a mismatch means the stored bytes
  // are damaged (kCorruption), not that the request is wrong (kInvalidArgument).
  bool cksum_from_store = false;
  // Rechunk: force the layout (0 = monolithic) and keep version/atime/checksum/custom of `expect`.
  std::optional<uint64_t> force_chunk_size;
  std::optional<ObjectMeta> expect;
};

class Store;
class PartWriter;

// A remote bucket's write, run just before its commit: uploads the object's bytes (`segs` in
// order, `size` bytes) to the backend and returns the custom metadata to merge into the object
// (what the backend said of it). A failure fails the write: nothing is committed.
using WriteThroughFn = std::function<Result<std::vector<std::pair<std::string, std::string>>>(
    const std::vector<FileSegment>& segs, uint64_t size)>;
struct MpuUpload;  // an in-flight multipart upload (store.cc)

// Streams one PUT to disk. Destroying it without a successful Commit() leaves nothing behind.
class ObjectWriter {
 public:
  ~ObjectWriter();
  Status Write(const void* data, size_t len);
  // The commit point. On success *meta describes the new object.
  Status Commit(ObjectMeta* meta);
  // Opens the files written so far for reading: *segs are the object's bytes in order, valid
  // while *fds stay open (a write-through to a remote backend reads them before the commit).
  // REQUIRES: neither committed nor aborted.
  Status OpenWritten(std::vector<UniqueFd>* fds, std::vector<FileSegment>* segs);
  uint64_t written() const { return written_; }
  // Merges `md` into the custom metadata the commit will store (what a backend said of the
  // object). REQUIRES: before Commit.
  void MergeCustom(const std::vector<std::pair<std::string, std::string>>& md);

 private:
  friend class Store;
  // A monolithic object of a known size up to this is kept in memory and written with its
  // header in one write at Commit (no temp file before then).
  static constexpr uint64_t kBufferedMax = 64 << 10;

  ObjectWriter(Store* store, std::string bucket, std::string name, BucketProps props, PutOptions opts);
  Status Init();
  // Runs `open` (a file on primary_mp_); a failure that the health check blames on that
  // mountpath disables it, and `open` runs once more on the next one.
  Status OnPrimary(const std::function<Status()>& open);
  Status OpenTemp();
  // Moves the buffered bytes into a temp file (a reader of OpenWritten needs a file).
  Status Unbuffer();
  Status OpenNextChunk();
  // A failed write aborts the writer (its files are removed at once); an I/O error that is not a
  // full disk also runs the health check on that mountpath.
  Status CheckedWriteError(Status st);
  Status Abort();

  Store* store_;
  const std::string bucket_;
  const std::string name_;
  const BucketProps props_;
  const PutOptions opts_;
  size_t primary_mp_ = 0;
  uint64_t chunk_size_ = 0;  // 0: monolithic
  bool buffering_ = false;   // monolithic and small: the bytes are in buffered_, no file yet
  std::string buffered_;
  ObjectMeta meta_;
  std::unique_ptr<Checksummer> cksum_;
  std::unique_ptr<Checksummer> client_cksum_;  // only when the client's type differs from the bucket's
  UniqueFd fd_;              // temp file (monolithic) or the current chunk file
  size_t fd_mp_ = 0;         // the mountpath fd_ is on
  std::string temp_path_;
  uint64_t data_offset_ = 0;
  uint64_t written_ = 0;     // object bytes so far
  uint64_t chunk_fill_ = 0;  // bytes in the current chunk
  std::vector<size_t> chunk_mps_;  // the mountpath of each chunk so far
  bool done_ = false;
};

// Streams one multipart-upload part into its chunk file; replaces an earlier part of that number
// only on Commit(). Destroying it uncommitted leaves nothing behind.
class PartWriter {
 public:
  ~PartWriter();
  Status Write(const void* data, size_t len);
  // `tag`: what the caller says of the part's bytes, kept with it (S3's part ETag).
  Status Commit(std::string tag = {});

 private:
  friend class Store;
  PartWriter() = default;
  std::shared_ptr<MpuUpload> upload_;
  uint32_t num_ = 0;
  uint64_t expected_ = 0;
  uint64_t written_ = 0;
  std::string temp_path_;
  std::string final_path_;
  UniqueFd fd_;
  bool done_ = false;
};

// A committed object opened for reading: the one way to read an object's bytes. Its fds stay
// valid even if the object is overwritten or deleted meanwhile, so a handle reads one consistent
// version. Chunk files are opened as Slice needs them; after OpenAll, every file is open and the
// handle is read-only: Segments and ReadAt may then be called from any thread (GetBatch shares a
// `std::shared_ptr<const ObjectHandle>` between its threads).
class ObjectHandle {
 public:
  const ObjectMeta& meta() const { return meta_; }
  const std::string& bucket() const { return bucket_; }  // its store key
  uint64_t size() const { return meta_.size; }
  // Segments covering object bytes [start, start+len). Opens the chunk files it needs; a chunk
  // that vanished (concurrent overwrite) is kConflict: re-open and retry (Store::OpenReading).
  // Slice checks each chunk file's length against the manifest as it opens it (kCorruption,
  // also for a chunk that is missing while the object is not overwritten).
  Result<std::vector<FileSegment>> Slice(uint64_t start, uint64_t len);
  // Opens every file of the object now (Slice of all of it); errors as Slice.
  Status OpenAll();
  // The segments covering [start, start+len). REQUIRES: OpenAll() succeeded, start+len <= size().
  std::vector<FileSegment> Segments(uint64_t start, uint64_t len) const;
  // Reads exactly [start, start+len) into buf. REQUIRES: as Segments.
  Status ReadAt(uint64_t start, void* buf, size_t len) const;
  // Re-hashes all of the object's bytes and compares them with its stored checksum (OK when it
  // has none): kCorruption "BAD DATA CHECKSUM: ..." on a mismatch. Reads the whole object: the
  // caller decides when (bucket prop checksum.validate_warm_get, the scrub job).
  Status VerifyChecksum();

 private:
  friend class Store;
  const Mountpaths* mps_ = nullptr;
  std::string bucket_;
  ObjectMeta meta_;
  UniqueFd primary_;
  uint64_t data_offset_ = 0;
  std::map<uint32_t, UniqueFd> chunks_;
  std::vector<FileSegment> all_;  // after OpenAll: the whole object, in order
  std::vector<uint64_t> starts_;  // after OpenAll: object offset of each of all_
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

// An in-flight multipart upload as listed (S3 ListMultipartUploads, ListParts).
struct MpuPartInfo {
  uint32_t num = 0;
  uint64_t size = 0;
  std::string tag;  // PartWriter::Commit's
};
struct MpuInfo {
  std::string name;
  std::string id;
  int64_t created_ns = 0;
  std::vector<MpuPartInfo> parts;  // by number; only from MpuDescribe
};

struct ListQuery {
  std::string prefix;
  std::string after;  // exclusive
  size_t limit = 10000;
  bool headers = true;  // false: names only (ListEach visits an empty header, reads none)
};

class Store {
 public:
  // Creates missing directories, loads the BMD and runs crash recovery.
  static Result<std::unique_ptr<Store>> Open(StoreOptions opts);
  ~Store();
  // Writes the object headers the server knows to a snapshot on each mountpath, read at the next
  // Open: the first listing after a restart then opens no object file whose header was known
  // (HeaderCache::Save). Call once no request runs any more, just before the store goes.
  Status SaveHeaderSnapshots();

  const Mountpaths& mountpaths() const { return mps_; }
  BucketRegistry& buckets() { return buckets_; }

  Status CreateBucket(const std::string& bucket, const nlohmann::json& props);
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
  // Up to q.limit objects in name order: visit(name, header) with the header's name empty, both
  // valid during the call only. Headers are read once and kept with their directory's sorted
  // entries (SortedDirCache), so a listing of unchanged directories opens no object file; with
  // !q.headers none is read.
  using ListVisitor = std::function<void(const std::string& name, const ObjectMeta& meta)>;
  Status ListEach(const std::string& bucket, const ListQuery& q, const ListVisitor& visit);
  Result<std::vector<ObjectMeta>> List(const std::string& bucket, const ListQuery& q);

  // Multipart upload: parts are written straight into chunk files of the upload.
  Result<std::string> MpuCreate(const std::string& bucket, const std::string& name,
                                std::vector<std::pair<std::string, std::string>> custom);
  // Opens part `num`; the caller streams `size` bytes with Write() and then Commit()s the part.
  Result<std::unique_ptr<PartWriter>> MpuPart(const std::string& bucket, const std::string& name,
                                                const std::string& upload_id, uint32_t num, uint64_t size);
  // `extra_custom` joins the custom metadata given at MpuCreate; `through`: a remote bucket's
  // upload of the assembled object, before its commit; *out (if given) describes the committed
  // object.
  Status MpuComplete(const std::string& bucket, const std::string& name, const std::string& upload_id,
                     std::vector<uint32_t> parts,
                     const std::vector<std::pair<std::string, std::string>>& extra_custom = {},
                     ObjectMeta* out = nullptr, const WriteThroughFn& through = {});
  // S3's completion with a subset of the parts: drops every part not in `parts` (strictly
  // ascending, each committed) and renumbers the others 1..M in their order, so that
  // MpuComplete({1..M}) makes them the object. kInvalidArgument naming a part that is not there.
  Status MpuKeepOnly(const std::string& bucket, const std::string& name, const std::string& upload_id,
                     const std::vector<uint32_t>& parts);
  // The upload with its committed parts; kNotFound as the other Mpu calls.
  Result<MpuInfo> MpuDescribe(const std::string& bucket, const std::string& name, const std::string& upload_id);
  // The bucket's uploads in flight (without parts), by name, then creation time.
  std::vector<MpuInfo> MpuList(const std::string& bucket);
  Status MpuAbort(const std::string& bucket, const std::string& name, const std::string& upload_id);

  // Rewrites one object as chunks of chunk_size (or monolithic when chunk_size == 0).
  // Skips objects already in that layout and objects overwritten meanwhile.
  Status Rechunk(const std::string& bucket, const std::string& name, uint64_t chunk_size);
  // Merges `md` into the object's custom metadata (or replaces it). Keeps the version.
  Status SetCustom(const std::string& bucket, const std::string& name,
                   std::vector<std::pair<std::string, std::string>> md, bool replace);
  // Server-side copy; the destination gets a new version and the source's custom metadata.
  // `through`: the destination is a remote bucket's object: its bytes, checked against the
  // source's checksum first, go to the backend before the local commit (nothing is committed if
  // that fails). Blocks on the backend then: keep it off I/O threads.
  Status Copy(const std::string& src_bucket, const std::string& src_name, const std::string& dst_bucket,
              const std::string& dst_name, const WriteThroughFn& through = {});

  // Append API: the object stays invisible until AppendFlush. An empty handle starts a new append
  // (copying the object's current content first: blocking, keep it off I/O threads); the returned
  // handle names it for the next call. At most kMaxOpenAppends are open at once (more: 429); one
  // left unused for kAppendTtl expires.
  static constexpr size_t kMaxOpenAppends = 256;
  static constexpr std::chrono::minutes kAppendTtl{10};
  Result<std::string> Append(const std::string& bucket, const std::string& name, const std::string& handle,
                             const std::function<Status(ObjectWriter&)>& write_body);
  Status AppendFlush(const std::string& bucket, const std::string& name, const std::string& handle,
                     ObjectMeta* meta, const WriteThroughFn& through = {});

  // Mountpath health (AIS FSHC) and the enable/disable API. A disabled mountpath is neither read
  // nor written; its objects are unavailable (404) and new objects go to the next enabled
  // mountpath in their HRW ranking. The disabled set persists across restarts (.ais.vmd.json).
  MountpathState GetMountpaths() const;
  // This node's identity, generated on the first start and kept in .ais.vmd.json with the
  // mountpath state, so tokens scoped to the cluster (auth) and scraped series (metrics) stay
  // valid across restarts.
  const std::string& cluster_uuid() const { return cluster_uuid_; }
  const std::string& daemon_id() const { return daemon_id_; }
  // kNotFound for a path that is not a mountpath; OK if already disabled.
  Status DisableMountpath(const std::string& path, const std::string& reason);
  // Checks the mountpath is healthy, removes duplicates of objects written elsewhere while it was
  // disabled (the copy with the higher version wins), then enables it. OK if already enabled.
  Status EnableMountpath(const std::string& path);
  // The health check: disables `mp` (logged) if its root is gone or replaced (unmounted), or if
  // a probe file cannot be written for any reason but a full disk. Returns true if it is healthy.
  // The periodic check passes write_probe = false (stat only).
  bool CheckMountpath(size_t mp, bool write_probe = true);

  // Scrub (store_scrub.cc): checks the object file at `path` on mountpath `mp` (as a walk of
  // bucket's objects found it): header, layout, chunk files and content checksum. A damaged
  // object is quarantined and *damage says what was wrong; *damage stays empty for a sound
  // object or one that went away meanwhile. *bytes: the bytes read.
  Status ScrubObject(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                     std::string* damage, uint64_t* bytes);

  // The work dir entry that holds quarantined objects (<mp>/.ais.work/quarantine/<id>/).
  static constexpr const char* kQuarantineDir = "quarantine";

  static std::string ObjNotFoundMessage(const std::string& bucket, const std::string& name) {
    return ObjectCname(bucket, name) + " does not exist";
  }

 private:
  friend class ObjectWriter;
  friend class PartWriter;

  explicit Store(StoreOptions opts);
  Status Recover();
  // Reads each mountpath's header snapshot into Headers() (run on header_loader_).
  void LoadHeaderSnapshots();
  // Moves a damaged object out of the namespace into <mp>/.ais.work/quarantine/<id>/ (its
  // chunk directories into the same <id> on their mountpaths), if the object file at `path`
  // still is file (dev, ino); kConflict if it was replaced meanwhile. Nothing is deleted.
  Status Quarantine(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                    uint64_t dev, uint64_t ino, const std::string& upload_id, const std::string& reason);
  // The object file of bucket/name on the first enabled mountpath (in HRW order) that has it.
  // *mp is set to where it was found (or the primary if nowhere).
  Result<UniqueFd> OpenObjectFile(const std::string& bucket, const std::string& name, size_t* mp);
  // Like OpenObjectFile but without opening: the mountpath holding the object file, if any.
  std::optional<size_t> LocateObject(const std::string& bucket, const std::string& name);
  Status SaveMountpathState();
  // Also loads cluster_uuid_ and daemon_id_ (Open creates them on the first start).
  Status LoadMountpathState();
  // Drops the copies on other enabled mountpaths that an object file on `mp` duplicates.
  Status Reconcile(size_t mp);
  void FshcLoop();
  // The rest of Open once `fd` (the object file, if it opened) is known.
  Result<ObjectHandle> OpenWith(const std::string& bucket, const std::string& name, Result<UniqueFd> fd,
                                std::span<char> ahead = {}, size_t* got = nullptr);
  std::mutex& StripeFor(const std::string& bucket, const std::string& name);
  // The commit point. Under the stripe lock: sets meta->version (previous + 1, or expect's),
  // writes the header into the temp file, renames it over the object file, then drops the
  // previous object's chunks. With `expect`, commits only if the current object still is that
  // version and upload (else kConflict). REQUIRES: temp_fd is temp_path, data at data_offset
  // (or in `body`).
  // `body`: the object's bytes, not yet in the file: written at data_offset with the header.
  Status CommitFile(const std::string& bucket, size_t mp, const std::string& temp_path, int temp_fd,
                    bool inline_data, uint64_t data_offset, ObjectMeta* meta,
                    const std::optional<ObjectMeta>& expect, std::string_view body = {});
  Status WriteChunkMarker(size_t mp, const std::string& bucket, const std::string& name,
                          const std::string& upload_id);
  void DropChunks(size_t mp, const std::string& bucket, const std::string& upload_id);
  // Creates the upload's chunk dir inside the existing bucket dir. kNotFound once the bucket is
  // destroyed: its dir went to trash and must not reappear under the bucket's name.
  Status MakeChunkDir(size_t mp, const std::string& bucket, const std::string& upload_id);
  // Commits a chunked object whose chunks are all in place (writer and multipart complete).
  Status CommitChunked(const std::string& bucket, size_t mp, ObjectMeta* meta,
                       const std::optional<ObjectMeta>& expect);
  std::string TempPath(size_t mp);
  // Copies the handle's bytes into w and commits it (rechunk, custom metadata, copy).
  Status CopyInto(ObjectHandle& src, ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through = {});
  // Rewrites an object with new options (custom metadata, layout), keeping its version; kConflict
  // if it changed meanwhile. Keeps the layout unless opts.force_chunk_size says otherwise.
  Status Rewrite(const std::string& bucket, const std::string& name, ObjectHandle& h, PutOptions opts);
  Result<std::shared_ptr<MpuUpload>> FindUpload(const std::string& bucket, const std::string& name,
                                             const std::string& upload_id);

  const StoreOptions opts_;
  const Mountpaths mps_;
  BucketRegistry buckets_;
  std::array<std::mutex, 256> stripes_;
  std::mutex uploads_mu_;
  std::map<std::string, std::shared_ptr<MpuUpload>> uploads_;  // guarded by uploads_mu_
  struct AppendState;
  std::mutex appends_mu_;
  std::map<std::string, std::shared_ptr<AppendState>> appends_;  // guarded by appends_mu_
  struct RootId {
    uint64_t dev = 0;
    uint64_t ino = 0;
  };
  std::vector<RootId> roots_;  // per mountpath, as opened; constant after Open
  std::mutex mp_state_mu_;     // serializes enable/disable and the state file
  uint64_t mp_state_version_ = 0;  // guarded by mp_state_mu_
  std::string cluster_uuid_;       // set once by LoadMountpathState
  std::string daemon_id_;          // set once by LoadMountpathState
  // Whether an object may be stored off its primary mountpath: one was written while a
  // better-ranked mountpath was disabled, or the set of mountpaths changed since it was
  // written. Only then do lookups of a name missing from its primary probe the others. Set
  // (and persisted in the state file) before any write can go elsewhere; never cleared.
  std::atomic<bool> off_primary_{true};
  bool MayBeOffPrimary() const { return mps_.size() > 1 && off_primary_.load(std::memory_order_relaxed); }
  std::mutex fshc_mu_;
  std::condition_variable fshc_cv_;
  bool fshc_stop_ = false;  // guarded by fshc_mu_
  std::thread fshc_;
  std::thread header_loader_;  // LoadHeaderSnapshots, from Open until it is done
  std::shared_future<void> headers_loaded_;  // ready once header_loader_ is done
};

}  // namespace ais
