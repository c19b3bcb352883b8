// Mirror: the extra copies of an object in a bucket with mirror.enabled (AIS n-way mirror).
//
// Invariants (docs/storage-format.md, "Mirror copies"):
// - A copy is a whole object file of its own: header + data, monolithic even when the object is
//   chunked (so it shares no chunk file with the object), at <mp>/ais/<bucket>/%mi/<name>. It is
//   never written in place: a temp file in mp's work dir renamed there.
// - The copies of an object whose file is on mountpath P live on Mountpaths::MirrorSlots(P):
//   the first copies - 1 enabled mountpaths of the object's HRW ranking after P.
// - Copies change only under the object's stripe lock, with the object: a commit writes the
//   copies' temp files before the object's rename (a copy that cannot be written fails the
//   write, nothing changed) and renames them right after it; a removal unlinks the object, then
//   its copies on every enabled mountpath.
// - Listings and walks take the object file; a copy stands in for an object only when that is
//   missing (Store::ForEachObject), and reads fall over to a copy when it is missing or damaged
//   (Store::Open*).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "store/bucket_registry.h"
#include "store/object_meta.h"
#include "store/volume.h"
#include "util/file_segment.h"
#include "util/status.h"

namespace ais {

// Copies written to temp files, waiting for the object's commit (Mirror::Prepare).
struct PreparedCopies {
  std::vector<size_t> mps;
  std::vector<std::string> temps;
};

class Mirror {
 public:
  Mirror(Volume& volume, const BucketRegistry& buckets) : volume_(volume), mps_(volume.mountpaths()), buckets_(buckets) {}
  Mirror(const Mirror&) = delete;
  Mirror& operator=(const Mirror&) = delete;

  // Told of an object whose copies fell behind (a copy that could not be placed): the store
  // queues a repair (Store::SyncCopies).
  void set_on_degraded(std::function<void(const std::string& bucket, const std::string& name)> fn) {
    on_degraded_ = std::move(fn);
  }
  // How many copies bucket's objects are kept in now (1: not mirrored), and whether copies of
  // them may exist at all (mirroring was ever on).
  size_t Copies(const std::string& bucket) const;
  bool MayHaveCopies(const std::string& bucket) const;

  // The copy `meta` describes (its bytes: `data` in order, then `body`) written to a temp file
  // on mountpath mp, header first; *temp: its path. On failure nothing is left behind.
  Status WriteTemp(size_t mp, const ObjectMeta& meta, const std::vector<FileSegment>& data, std::string* temp,
                   std::string_view body = {});
  // Renames the temp file to `path` (a file of bucket's), making its parent directories.
  Status PlaceAt(const std::string& temp, const std::string& path, const std::string& bucket);
  // A commit's copies: bucket's copies - 1 temp files on the slots of an object on `primary`. A
  // slot whose write fails (but for a full disk) is health-checked; if that disables it, the
  // next slot is tried. Any other failure removes what was written and fails. REQUIRES: stripe lock.
  Status Prepare(const std::string& bucket, size_t primary, const ObjectMeta& meta,
                 const std::vector<FileSegment>& data, std::string_view body, PreparedCopies* out);
  // After the object's rename: places the prepared copies and removes bucket/name's copies on
  // every other enabled mountpath (the object's own included). A copy that cannot be placed is
  // unlinked (no stale copy is left) and reported (on_degraded). REQUIRES: stripe lock.
  void Place(const std::string& bucket, const std::string& name, PreparedCopies& prepared);
  // Removes the temp files of copies that will not be placed.
  static void Drop(PreparedCopies& prepared);
  // Unlinks bucket/name's copies on every enabled mountpath but those in `keep`; the number removed.
  size_t RemoveCopies(const std::string& bucket, const std::string& name, const std::vector<size_t>& keep = {});

 private:
  Volume& volume_;
  const Mountpaths& mps_;
  const BucketRegistry& buckets_;
  std::function<void(const std::string&, const std::string&)> on_degraded_;
};

// `meta` as a copy stores it: monolithic (no upload id, no chunk sizes).
ObjectMeta CopyMeta(const ObjectMeta& meta);

}  // namespace ais
