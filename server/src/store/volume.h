// Volume: the mountpaths in service, their health (AIS FSHC, on its own thread) and this node's
// identity, all kept in each mountpath's state file (.ais.vmd.json). Knows no bucket or object
// beyond where an object file may be.
//
// Invariants:
// - A disabled mountpath is neither read nor written: its objects are unavailable (404) and new
//   objects go to the next enabled mountpath in their HRW ranking. The state file is written to
//   every enabled mountpath on each change, versioned; at start the highest version wins, and a
//   start never leaves every mountpath disabled.
// - An object is looked for off its primary mountpath only while off_primary_ says it may be
//   there: set (and persisted) before any write can go elsewhere - a mountpath disabled, the
//   set of mountpaths changed, data found without a state file - and never cleared.
// - cluster_uuid and daemon_id are generated once, on the first start, and kept in the state
//   file, so tokens scoped to the cluster (auth) and scraped series (metrics) stay valid.
// - The set of mountpaths starts as --mountpath gives it and changes at run time by attach and
//   detach (AIS keeps the set in its config and VMD): the state file records the paths attached
//   and the flags' paths detached, so a restart with the same flags has the same set. A detach
//   first marks the mountpath leaving (still read, nothing new placed there) until a resilver
//   moved its objects off (FinishLeaving); a restart meanwhile keeps it leaving.
// - resilver_pending() from a change of the set or of a mountpath's state until a resilver
//   finished over the new set (ResilverDone): persisted, so a restart resumes it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/mountpaths.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

// What GET /v1/daemon?what=mountpaths reports.
struct MountpathState {
  std::vector<std::string> available;
  std::vector<std::string> waiting_dd;  // leaving: being detached (resilver moves its objects off)
  std::vector<std::string> disabled;
};

class Volume {
 public:
  // fshc_interval_ms: the period of the health check thread (0: check only after I/O errors).
  Volume(std::vector<std::string> paths, bool fsync, int fshc_interval_ms);
  ~Volume();  // stops the health check thread
  Volume(const Volume&) = delete;
  Volume& operator=(const Volume&) = delete;

  // Loads the state, creates the enabled mountpaths' work dirs and records their roots, and on
  // the first start creates the node's identity.
  Status Open();
  // Whether no state file was found at Open (a new store, or one from before state files).
  bool fresh() const { return fresh_; }
  // Data but no state file: where its objects are is unknown (they may be off their primary).
  void AssumeOffPrimary();
  // Starts the periodic health check (if its period is not 0). REQUIRES: Open succeeded.
  void StartHealthChecks();

  const Mountpaths& mountpaths() const { return mps_; }
  bool fsync() const { return fsync_; }
  MountpathState Get() const;
  const std::string& cluster_uuid() const { return cluster_uuid_; }
  const std::string& daemon_id() const { return daemon_id_; }

  // Told of every change of the set or of a mountpath's state (attach, detach, enable, disable,
  // the health check's), after it is made and saved, with whether a resilver was asked for.
  void set_on_change(std::function<void(bool resilver)> fn) {
    std::lock_guard lock(state_mu_);
    on_change_ = std::move(fn);
  }
  // kNotFound for a path that is not a mountpath; OK if already disabled.
  Status Disable(const std::string& path, const std::string& reason, bool resilver = true);
  // Adds a directory to the set (AIS attach-mp), enabled: new objects go to it by HRW. 400 for a
  // path that is not absolute and clean-able, the root, not a directory, already attached,
  // disabled (enable it instead), nested in a mountpath or holding one; 404 if it does not
  // exist. Attaching a leaving mountpath takes it back (AIS: the dd-transition interrupted).
  // *added: whether the set changed.
  Status Attach(const std::string& path, bool* added);
  // Takes a mountpath out of the set (AIS detach-mp). With `resilver`, an enabled one is left
  // leaving until FinishLeaving; without, and for a disabled one, it goes at once. 404 for a
  // path not in the set; 400 for the last enabled one.
  Status Detach(const std::string& path, bool resilver);
  // Detaches every leaving mountpath (their objects were moved off), and clears
  // resilver_pending: the resilver that just finished saw the current set. Does nothing and
  // returns false if the set changed since `change_seen` (a newer resilver ends it) or a write
  // landed on a leaving mountpath since `late_seen` (another pass must move it).
  bool ResilverDone(uint64_t change_seen, uint64_t late_seen);
  // A commit put a file on a leaving mountpath (its writer chose it before the detach began).
  void NoteLateWrite() { late_writes_.fetch_add(1, std::memory_order_acq_rel); }
  // Held shared by a commit from its check that its mountpath is still read to its
  // NoteLateWrite, and exclusively by ResilverDone: a commit lands before a mountpath leaves
  // the set (and is counted), or is refused after.
  std::shared_mutex& commit_mu() { return commit_mu_; }
  uint64_t late_writes() const { return late_writes_.load(std::memory_order_acquire); }
  bool resilver_pending() const { return resilver_pending_.load(std::memory_order_acquire); }
  // Counts changes of the set or states: a resilver that started at change N may finish only
  // what it saw (ResilverDone(N) does nothing if a later change came).
  uint64_t changes() const { return changes_.load(std::memory_order_acquire); }
  // Checks the mountpath is healthy, runs `reconcile(mp)` (the objects written elsewhere while it
  // was disabled), then enables it; *enabled: whether it was enabled by this call (false: it
  // already was). A leaving mountpath is simply enabled again. kNotFound for a path that is not
  // a mountpath.
  Status Enable(const std::string& path, const std::function<Status(size_t mp)>& reconcile, bool* enabled);
  // The health check: disables `mp` (logged) if its root is gone or replaced (unmounted), or if a
  // probe file cannot be written for any reason but a full disk. Returns true if it is healthy.
  // The periodic check passes write_probe = false (stat only).
  bool Check(size_t mp, bool write_probe = true);

  // Whether an object may be stored off its primary mountpath (see above).
  bool MayBeOffPrimary() const { return mps_.size() > 1 && off_primary_.load(std::memory_order_relaxed); }
  // The object file of bucket/name on the first enabled mountpath (in HRW order) that has it.
  // *mp is set to where it was found (or the primary if nowhere).
  Result<UniqueFd> OpenObjectFile(const std::string& bucket, const std::string& name, size_t* mp) const;
  // Like OpenObjectFile but without opening: the mountpath holding the object file, if any.
  std::optional<size_t> LocateObject(const std::string& bucket, const std::string& name) const;

 private:
  struct RootId {
    uint64_t dev = 0;
    uint64_t ino = 0;
  };
  Status LoadState();
  // Writes the state file to every enabled mountpath and to those in `also` (best effort: the
  // mountpaths just detached, so that their file names the set they left). REQUIRES: state_mu_ held
  Status SaveState(const std::vector<size_t>& also = {});
  // Whether mp's root still is the directory it had when opened, attached or enabled (a
  // mountpath not yet recorded counts as the same).
  bool SameRoot(size_t mp);
  // After a change: counted, marked for a resilver (if asked), saved, then on_change_ called.
  // REQUIRES: state_mu_ held by the caller's `lock`, which this releases.
  void Changed(std::unique_lock<std::mutex>& lock, bool resilver, const std::vector<size_t>& also = {});
  void FshcLoop();

  Mountpaths mps_;
  std::vector<std::string> flag_paths_;  // as --mountpath gave them, cleaned
  const bool fsync_;
  const int fshc_interval_ms_;
  bool fresh_ = false;             // set by Open
  std::string cluster_uuid_;       // set once by Open
  std::string daemon_id_;          // set once by Open
  std::atomic<bool> off_primary_{true};
  std::atomic<bool> resilver_pending_{false};
  std::atomic<uint64_t> changes_{0};
  std::atomic<uint64_t> late_writes_{0};
  std::shared_mutex commit_mu_;
  std::function<void(bool)> on_change_;  // guarded by state_mu_
  std::mutex state_mu_;            // serializes enable/disable and the state file
  uint64_t state_version_ = 0;     // guarded by state_mu_
  std::mutex fshc_mu_;
  std::vector<RootId> roots_;      // per slot (kMaxSlots), as opened, attached or enabled; guarded by fshc_mu_
  std::condition_variable fshc_cv_;
  bool fshc_stop_ = false;         // guarded by fshc_mu_
  std::thread fshc_;
};

}  // namespace ais
