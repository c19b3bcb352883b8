// Committer: the commit protocol, the only way an object file appears, changes or goes.
//
// Invariants (docs/storage-format.md):
// - An object becomes visible at one rename(), under its stripe lock: its bytes went first to a
//   temp file in the primary mountpath's work dir (monolithic), or to chunk files named by a
//   fresh upload id (chunked), guarded by a chunk marker in the work dir
//   (<work>/chunks-<upload id>: bucket and name) from before the first chunk until after the
//   commit or the drop.
// - A committed object file is never written in place: a change renames a new one over it, or
//   unlinks it (listings keep the headers they read on that: sorted_walker.h). The chunks of the
//   object it replaces or removes are dropped after the rename/unlink, with a marker guarding
//   them in between.
// - Recover, at startup, deletes temp files and every chunk directory whose marker names an
//   upload that the committed object file does not reference; a crash at any step leaves either
//   the old object or the new one, and nothing that recovery does not sweep.
// - A file moves to another mountpath (resilver) as a copy renamed into place, then the old one
//   unlinked, with a move marker (<work>/moving-<id>: from, to) from before the rename until
//   after the unlink: one of the two is whole at every moment, and Recover finishes a move a
//   crash cut short (once `to` exists, `from` goes).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "store/bucket_registry.h"
#include "store/mirror.h"
#include "store/object_meta.h"
#include "store/relocation_log.h"
#include "store/volume.h"
#include "util/status.h"

namespace ais {

class Committer {
 public:
  Committer(Volume& volume, const BucketRegistry& buckets, Mirror& mirror)
      : volume_(volume), mps_(volume.mountpaths()), buckets_(buckets), mirror_(mirror) {}
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;

  bool fsync() const { return volume_.fsync(); }
  // The lock every change of bucket/name's object file is made under.
  std::mutex& StripeFor(const std::string& bucket, const std::string& name);
  // Where a change that moves an object's files between mountpaths is logged, under its stripe.
  RelocationLog& relocations() { return relocations_; }
  // A fresh temp file name in mountpath mp's work dir.
  std::string TempPath(size_t mp) const;

  // The marker guarding the chunks of `upload_id` (written to mp's work dir), and its removal
  // once they are committed (ForgetChunkMarker) or dropped with it (DropChunks).
  Status WriteChunkMarker(size_t mp, const std::string& bucket, const std::string& name,
                          const std::string& upload_id);
  void ForgetChunkMarker(size_t mp, const std::string& upload_id);
  void DropChunks(size_t mp, const std::string& bucket, const std::string& upload_id);
  // Creates the upload's chunk dir inside the existing bucket dir. kNotFound once the bucket is
  // destroyed: its dir went to trash and must not reappear under the bucket's name.
  Status MakeChunkDir(size_t mp, const std::string& bucket, const std::string& upload_id);

  // The commit point. Under the stripe lock: sets meta->version (previous + 1, or expect's),
  // writes the header into the temp file, renames it over the object file, then drops the
  // previous object's chunks. With `expect`, commits only if the current object still is that
  // version and upload (else kConflict). REQUIRES: temp_fd is temp_path, data at data_offset
  // (or in `body`).
  // `body`: the object's bytes, not yet in the file: written at data_offset with the header.
  // In a mirrored bucket the copies are written before the rename and placed right after it
  // (mirror.h); a copy that cannot be written fails the commit, nothing changed.
  Status CommitFile(const std::string& bucket, size_t mp, const std::string& temp_path, int temp_fd,
                    bool inline_data, uint64_t data_offset, ObjectMeta* meta,
                    const std::optional<ObjectMeta>& expect, std::string_view body = {});
  // Commits a chunked object whose chunks are all in place (writer and multipart complete).
  Status CommitChunked(const std::string& bucket, size_t mp, ObjectMeta* meta, const std::optional<ObjectMeta>& expect);
  // Unlinks bucket/name's object file, then drops its chunks and prunes its empty parent dirs.
  // With `keep`: asked under the stripe lock with the object's current header; true leaves the
  // object as it is and returns kConflict (eviction: the object changed or was read meanwhile).
  // *removed_bytes (if set): the object's size. The object's mirror copies go with it; an object
  // whose file is lost but has copies is removed too (its copies).
  Status Remove(const std::string& bucket, const std::string& name,
                const std::function<bool(const ObjectMeta&)>& keep = {}, uint64_t* removed_bytes = nullptr);

  // Moves the file `from` (an object file or a chunk of bucket's) to `to` on mountpath to_mp, as
  // stated above; *bytes: its size. REQUIRES: `to` absent; the stripe lock of its object.
  Status Move(const std::string& bucket, const std::string& from, size_t to_mp, const std::string& to,
              uint64_t* bytes);

  // Drops the copies on other enabled mountpaths that an object file on `mp` duplicates (the
  // copy with the higher version, then the later atime, wins): run before `mp` is enabled.
  Status Reconcile(size_t mp);
  // Startup recovery (see above), on the enabled mountpaths; also removes interrupted atomic
  // writes of the BMD, the state file and the header snapshot.
  Status Recover();
  // Removes the temp files (*.tmp) older than `age` from every mountpath's work dir (a PUT that
  // old is dead: its connection timed out long ago), calling removed(its size) for each; `stop`
  // is asked before each entry (true: stop, OK).
  Status RemoveStaleTemps(std::chrono::seconds age, const std::function<bool()>& stop,
                          const std::function<void(uint64_t bytes)>& removed);

  // Removes what deleted buckets left behind, each older than `age` (AIS space cleanup): trash
  // of destroyed buckets in the work dirs (its removal was cut short), chunk markers of buckets
  // no longer in the BMD, and bucket directories the BMD does not have (a mountpath that was
  // disabled while its bucket was destroyed). removed(bytes) for each; `stop` as above.
  Status RemoveLeftovers(std::chrono::seconds age, const std::function<bool()>& stop,
                         const std::function<void(uint64_t bytes)>& removed);

  // The upload ids whose chunks a marker guards now (writes, multipart uploads, drops in flight).
  std::set<std::string> ChunkMarkers() const;
  // Removes bucket's chunk directories older than `age` whose upload id is not in `keep` (the
  // markers taken before the caller's walk of the bucket's objects, and the upload ids of the
  // objects it found): chunks no object references and nothing is writing. removed(bytes) each.
  Status RemoveUnreferencedChunks(const std::string& bucket, const std::set<std::string>& keep,
                                  std::chrono::seconds age, const std::function<bool()>& stop,
                                  const std::function<void(uint64_t bytes)>& removed);

  // The work dir entry that holds quarantined objects (<mp>/.ais.work/quarantine/<id>/): kept by
  // Recover.
  static constexpr const char* kQuarantineDir = "quarantine";

 private:
  Volume& volume_;
  const Mountpaths& mps_;
  const BucketRegistry& buckets_;
  // A commit whose object file or chunks are on a leaving mountpath (its writer chose it before
  // the detach began): the resilver under way may have passed its name (Volume::NoteLateWrite).
  void NoteLeavingFiles(const std::string& bucket, size_t mp, const ObjectMeta& meta);

  Mirror& mirror_;
  std::array<std::mutex, 256> stripes_;
  RelocationLog relocations_;
};

}  // namespace ais
