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
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
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

  // kNotFound for a path that is not a mountpath; OK if already disabled.
  Status Disable(const std::string& path, const std::string& reason);
  // Checks the mountpath is healthy, runs `reconcile(mp)` (the objects written elsewhere while it
  // was disabled), then enables it; *enabled: whether it was enabled by this call (false: it
  // already was). kNotFound for a path that is not a mountpath.
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
  Status SaveState();  // REQUIRES: state_mu_ held
  void FshcLoop();

  const Mountpaths mps_;
  const bool fsync_;
  const int fshc_interval_ms_;
  bool fresh_ = false;             // set by Open
  std::string cluster_uuid_;       // set once by Open
  std::string daemon_id_;          // set once by Open
  std::atomic<bool> off_primary_{true};
  std::mutex state_mu_;            // serializes enable/disable and the state file
  uint64_t state_version_ = 0;     // guarded by state_mu_
  std::mutex fshc_mu_;
  std::vector<RootId> roots_;      // per mountpath, as opened or enabled; guarded by fshc_mu_
  std::condition_variable fshc_cv_;
  bool fshc_stop_ = false;         // guarded by fshc_mu_
  std::thread fshc_;
};

}  // namespace ais
