// The ETLs of this node (AIS etlMD plus each target's transformer), as local processes: init,
// start, stop, delete, list, details, logs, health, metrics (spec etl.md §2, §3), and the
// running transformer a transform goes to.
//
// Invariants: one entry per name; an entry is Running only while its process is up and
// answered /health; a process that exits makes its entry Aborted (kept, with the reason and
// the output, until started again or deleted). A transform in flight holds its RunningEtl
// (shared), so a stop never frees what a transform uses; it fails that transform instead.
// Nothing here runs on an I/O thread: Init and Start block up to init_timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "archive/worker_pool.h"
#include "etl/etl_msg.h"
#include "etl/process.h"
#include "etl/transformer_client.h"
#include "etl/transformer_connections.h"
#include "etl/ws_client.h"
#include "util/status.h"

namespace ais::etl {

// --etl: whether ETLs (user code run by this server) may be initialized.
enum class EtlMode {
  kAuto,  // when tokens are required (init needs ADMIN), or the server listens on loopback only
  kOn,    // always: anyone who can reach the port may run code here (no tokens required)
  kOff,   // never
};

struct EtlOptions {
  EtlMode mode = EtlMode::kAuto;
  std::string python = "python3";  // runs `-m aistore.etl_runtime` (--etl-python)
  std::string dir;                 // work dirs and dependency environments (main: <mountpath 0>/.ais.etl)
};

// One recorded per-object failure (AIS ObjErr).
struct ObjError {
  std::string obj_name;  // "ais://bck/obj"
  std::string msg;
  int ecode = 0;
};

// What a transform needs of a running ETL; alive as long as a transform holds it.
struct RunningEtl {
  EtlSpec spec;
  TransformerClient client;
  TransformerConnections connections;  // the I/O threads' own (the inline GET of a small object)
  std::unique_ptr<WsClient> ws;  // ws:// ETLs: their WebSocket connections
  std::string secret;  // authenticates the transformer's calls to /v1/etl/_object
  RunningEtl(EtlSpec s, uint16_t port, std::string sec)
      : spec(std::move(s)),
        client("http://127.0.0.1:" + std::to_string(port)),
        connections(port),
        ws(spec.comm == CommType::kWs ? std::make_unique<WsClient>("127.0.0.1", port) : nullptr),
        secret(std::move(sec)) {}
};

class EtlManager {
 public:
  static constexpr size_t kMaxObjErrors = 128;  // per (ETL, job), identical messages kept once

  explicit EtlManager(EtlOptions opts);
  ~EtlManager();  // Shutdown()
  EtlManager(const EtlManager&) = delete;
  EtlManager& operator=(const EtlManager&) = delete;

  // Set once before serving: this node's URL as transformers reach it, and what --etl auto
  // decides by.
  void Configure(std::string target_url, bool auth_required, bool loopback_only);
  // Whether an init may run here; kForbidden (or kNotSupported with --etl off) saying how to enable it.
  Status CheckInitAllowed() const;
  bool off() const { return opts_.mode == EtlMode::kOff; }
  // Where the blocking calls below run (off the I/O threads).
  WorkerPool& pool() { return pool_; }

  // Starts the transformer and waits (up to init_timeout) for it to answer; returns the
  // inline job id. kAlreadyExists "etl job NAME already exists" for a name in use.
  Result<std::string> Init(const EtlSpec& spec);
  // Restarts an Aborted ETL (kInvalidArgument in any other stage); returns the new job id.
  Result<std::string> Start(const std::string& name);
  Status Stop(const std::string& name);
  Status Delete(const std::string& name);  // stops it first

  nlohmann::json List() const;  // [Info]
  // {"init_msg", "obj_errors"} of the inline transforms, or of offline job `job_id`.
  Result<nlohmann::json> Details(const std::string& name, const std::string& job_id) const;
  Result<std::string> Logs(const std::string& name) const;
  Result<std::string> HealthStatus(const std::string& name) const;
  Result<Process::Usage> Usage(const std::string& name) const;

  // The running ETL `name`; kNotFound in AIS's words when it is not Running.
  Result<std::shared_ptr<RunningEtl>> Find(const std::string& name) const;
  // Whether `secret` is the current secret of ETL `name`.
  bool CheckSecret(const std::string& name, const std::string& secret) const;
  // A per-object failure of the inline transforms (job_id "") or of offline job `job_id`.
  void RecordError(const std::string& name, const std::string& job_id, ObjError err);
  // An inline transform (GET or single-object copy) that delivered `bytes`.
  void CountInline(const std::string& name, uint64_t bytes, bool direct_put);

  // Brings back the ETLs of the last run (their init messages are kept in `dir`/etl.json): the
  // ones that were running start again in the background (unless CheckInitAllowed refuses), the
  // others come back Aborted. A file that cannot be read is reported and left as it is (the ETLs
  // are not lost by a rewrite). REQUIRES: Configure() first.
  Status Restore();
  // Stops every transformer (server shutdown).
  void Shutdown();

 private:
  struct Entry;
  Result<std::string> Launch(const std::string& name);  // REQUIRES: the entry exists, no process
  void OnExit(const std::string& name, uint64_t generation, const std::string& how);
  std::vector<std::string> EnvFor(const EtlSpec& spec, uint16_t port, const std::string& secret) const;
  // Writes every entry's init message and whether it runs to `dir`/etl.json. REQUIRES: mu_ held.
  void PersistLocked();

  EtlOptions opts_;
  std::string target_url_;
  bool auth_required_ = false;
  bool loopback_only_ = false;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};
  bool restored_ = false;  // guarded by mu_: etl.json is written only after it was read
  WorkerPool pool_{16, std::chrono::seconds(10)};
};

}  // namespace ais::etl
