// Mountpaths: the data directories (one per disk on real machines), where each file lives,
// and how every path below a mountpath is spelled. All file names are built here.
//
//   <mp>/.ais.bmd.json                         bucket metadata (a copy on every mountpath)
//   <mp>/.ais.headers                          object headers kept at the last stop; read at start
//   <mp>/ais/<bucket>/%ob/<encoded name>       object file (header + data, or header only if chunked)
//   <mp>/ais/<bucket>/%ch/<upload id>/<kkkk>   chunk k of a chunked object or multipart upload
//   <mp>/ais/<bucket>/%mi/<encoded name>       a mirror copy: the whole object, header + data
//   <mp>/.ais.work/                            temp files and chunk markers; swept at startup
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais {

// The mountpaths live in a fixed table of slots: a slot's index (`mp` everywhere) names one
// path for the life of the process, so an index held anywhere (a walk, a writer, a job) stays
// valid across attach and detach. A path attached at run time takes a new slot (or its old one,
// if it was detached before); a detached slot is marked so and never reused for another path.
// Readers take no lock: a slot's path and seed are written before the slot is published
// (size()'s release store) and never change; its state is one atomic byte.
class Mountpaths {
 public:
  static constexpr size_t kMaxSlots = 64;
  // A slot's state (AIS: available, waiting_dd, disabled; detached slots are no longer listed).
  //   kEnabled:  read, and gets new objects, chunks and copies
  //   kLeaving:  being detached: still read (resilver moves its objects off), gets nothing new
  //   kDisabled: neither read nor written; its objects are unavailable
  //   kDetached: gone from the set
  enum class State : uint8_t { kEnabled, kLeaving, kDisabled, kDetached };

  // REQUIRES: paths non-empty, absolute, distinct, at most kMaxSlots. Sorted into slots 0..n-1.
  explicit Mountpaths(std::vector<std::string> paths);
  Mountpaths(const Mountpaths&) = delete;
  Mountpaths& operator=(const Mountpaths&) = delete;

  // The number of slots in use: every mp index is below it (detached slots included).
  size_t size() const { return used_.load(std::memory_order_acquire); }
  // Mountpaths in the set (not detached), whatever their state.
  size_t count() const;
  const std::string& path(size_t mp) const { return slots_[mp].path; }
  // Every slot's path, indexed by mp (detached slots included: check attached(mp)).
  std::vector<std::string> paths() const;
  // The paths in the set (not detached), in slot order.
  std::vector<std::string> Attached() const;
  // The slot of `path` (trailing slashes ignored), detached ones included.
  std::optional<size_t> Find(std::string_view path) const;

  State state(size_t mp) const { return slots_[mp].state.load(std::memory_order_acquire); }
  bool attached(size_t mp) const { return state(mp) != State::kDetached; }
  // Read (enabled or leaving). A disabled or detached mountpath is neither read nor written.
  bool enabled(size_t mp) const {
    State s = state(mp);
    return s == State::kEnabled || s == State::kLeaving;
  }
  // Gets new objects, chunks and copies.
  bool placeable(size_t mp) const { return state(mp) == State::kEnabled; }
  size_t num_disabled() const { return num_disabled_.load(std::memory_order_acquire); }
  // Whether every mountpath in use is enabled (placement then is plain HRW over all of them).
  size_t num_placeable() const { return num_placeable_.load(std::memory_order_acquire); }
  size_t num_leaving() const { return num_leaving_.load(std::memory_order_acquire); }
  // Reads of mirrored objects in flight on mountpath mp (ReadingOn counts them): a read picks
  // the least busy of an object's copies.
  std::atomic<int32_t>* reading(size_t mp) const { return &slots_[mp].reading; }

  // Changes. REQUIRES: one caller at a time (Volume serializes them); readers may run meanwhile.
  // SetEnabled: kEnabled or kDisabled (from any attached state); false if it already was.
  bool SetEnabled(size_t mp, bool on);
  void SetState(size_t mp, State s);
  // Takes `path` (clean, absolute) into the set in state `s`: its old slot if it had one, else
  // a new one. kInvalidArgument when all kMaxSlots are taken.
  Result<size_t> Add(const std::string& path, State s = State::kEnabled);

  // All mountpaths in the set by highest-random-weight score for bucket/object, best first.
  std::vector<size_t> Ranked(std::string_view bucket, std::string_view object) const;
  // Where a new object goes: the best-ranked placeable mountpath (the HRW choice when all are
  // enabled, so adding a mountpath moves only ~1/N objects). The best-ranked attached one when
  // none is placeable.
  size_t PrimaryFor(std::string_view bucket, std::string_view object) const;
  // Chunks of one upload go round-robin from a per-upload start over the placeable mountpaths,
  // so every mountpath gets its share.
  size_t ForChunk(std::string_view upload_id, uint32_t chunk_num) const;
  // Where the copies - 1 extra copies of an object whose object file is on `primary` go (n-way
  // mirror): the first copies - 1 placeable mountpaths of its HRW ranking, `primary` left out.
  // Fewer when fewer are placeable.
  std::vector<size_t> MirrorSlots(std::string_view bucket, std::string_view object, size_t primary,
                                  size_t copies) const;

  std::string BucketDir(size_t mp, std::string_view bucket) const;
  std::string ObjectsDir(size_t mp, std::string_view bucket) const;
  std::string ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const;
  std::string MirrorDir(size_t mp, std::string_view bucket) const;
  std::string MirrorPath(size_t mp, std::string_view bucket, std::string_view object) const;
  std::string ChunkDir(size_t mp, std::string_view bucket, std::string_view upload_id) const;
  std::string ChunkPath(size_t mp, std::string_view bucket, std::string_view upload_id, uint32_t num) const;
  std::string WorkDir(size_t mp) const;
  std::string BmdPath(size_t mp) const;
  // The headers the server knew when it last stopped (HeaderCache::Save), until it starts again.
  std::string HeaderSnapshotPath(size_t mp) const;

 private:
  struct Slot {
    std::string path;   // written once, before the slot is published
    uint64_t seed = 0;  // HRW hash seed, from the path: placement does not depend on slot order
    std::atomic<State> state{State::kDetached};
    mutable std::atomic<int32_t> reading{0};
  };
  void CountState(State s, int delta);

  std::unique_ptr<Slot[]> slots_;
  std::atomic<size_t> used_{0};
  std::atomic<size_t> num_disabled_{0};
  std::atomic<size_t> num_placeable_{0};
  std::atomic<size_t> num_leaving_{0};
};

}  // namespace ais
