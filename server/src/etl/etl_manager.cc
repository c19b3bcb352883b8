#include "etl/etl_manager.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "util/file.h"
#include "util/json_fields.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais::etl {

namespace {

constexpr const char* kInitializing = "Initializing";
constexpr const char* kRunning = "Running";
constexpr const char* kAborted = "Aborted";
constexpr size_t kInitFailureTail = 4096;  // bytes of the transformer's output an init failure quotes

// What a transformer inherits from the server's environment: what finding Python, its packages
// and pip needs; never credentials (AWS_*, AIS_AUTHN_*, tokens).
constexpr const char* kInherited[] = {"PATH",       "HOME",          "LANG",           "LC_ALL",     "LC_CTYPE",
                                      "TMPDIR",     "PYTHONPATH",    "VIRTUAL_ENV",    "SSL_CERT_FILE",
                                      "SSL_CERT_DIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CACHE_DIR",
                                      "HTTP_PROXY", "HTTPS_PROXY",   "NO_PROXY",       "http_proxy", "https_proxy",
                                      "no_proxy"};

Result<uint16_t> FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    int err = errno;
    ::close(fd);
    return Status::FromErrno(err, "choosing a port for the transformer");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string Tail(const std::string& s, size_t n) { return s.size() > n ? "..." + s.substr(s.size() - n) : s; }

nlohmann::json ErrorsJson(const std::vector<ObjError>& errs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : errs) a.push_back({{"obj_name", e.obj_name}, {"msg", e.msg}, {"ecode", e.ecode}});
  return a;
}

Status NoSuchEtl(const std::string& name) { return Status::NotFound("etl job " + name + " does not exist"); }

constexpr const char* kMetaFile = "etl.json";

}  // namespace

struct EtlManager::Entry {
  EtlSpec spec;
  std::string stage = kInitializing;
  std::string abort_reason;
  std::string job_id;  // the inline job's
  uint64_t generation = 0;  // of the current process; a stale process's exit is ignored
  std::unique_ptr<Process> process;
  std::shared_ptr<RunningEtl> running;  // set while Running; dropped by Retire
  std::string last_output;              // a stopped process's output
  std::chrono::steady_clock::time_point started{};
  uint64_t obj_count = 0, in_bytes = 0, out_bytes = 0;
  std::vector<ObjError> inline_errors;
  std::map<std::string, std::vector<ObjError>> job_errors;

  // Drops the running transformer. Its idle connections close now: a transform still holding
  // it may outlive the I/O contexts at a stop, and their sockets must not (CloseIdle).
  void Retire() {
    if (running) running->connections.CloseIdle();
    running.reset();
  }
  ~Entry() { Retire(); }
};

EtlManager::EtlManager(EtlOptions opts) : opts_(std::move(opts)) {}

EtlManager::~EtlManager() { Shutdown(); }

void EtlManager::Configure(std::string target_url, bool auth_required, bool loopback_only) {
  target_url_ = std::move(target_url);
  auth_required_ = auth_required;
  loopback_only_ = loopback_only;
}

Status EtlManager::CheckInitAllowed() const {
  switch (opts_.mode) {
    case EtlMode::kOff:
      return Status::NotSupported("ETL is off on this server (--etl off)");
    case EtlMode::kOn:
      return Status::OK();
    case EtlMode::kAuto:
      if (auth_required_ || loopback_only_) return Status::OK();
      return Status::Forbidden(
          "ETL init runs user code on this server, which listens beyond loopback with no access control: "
          "refused. Require tokens (--auth-required: ETL init then needs an ADMIN token), listen on 127.0.0.1 "
          "(--host), or accept the risk with --etl on");
  }
  return Status::OK();
}

std::vector<std::string> EtlManager::EnvFor(const EtlSpec& spec, uint16_t port, const std::string& secret) const {
  std::vector<std::string> env;
  for (const char* k : kInherited) {
    if (const char* v = std::getenv(k)) env.push_back(std::string(k) + "=" + v);
  }
  // As AIS sets a pod's: runtime.env, then its own, then the top-level env.
  for (const auto& [k, v] : spec.runtime_env) env.push_back(k + "=" + v);
  env.push_back("AIS_TARGET_URL=" + target_url_ + "/v1/etl/_object/" + spec.name + "/" + secret);
  env.push_back(std::string("direct_put=") + (spec.support_direct_put ? "true" : "false"));
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  // Ours (aistore/etl_runtime.py): where to listen, which Python the class was pickled by, and
  // where dependency environments are cached.
  env.push_back("AIS_ETL_HOST=127.0.0.1");
  env.push_back("AIS_ETL_PORT=" + std::to_string(port));
  env.push_back("AIS_ETL_RUNTIME=" + spec.runtime_python);
  env.push_back("AIS_ETL_ENVS_DIR=" + opts_.dir + "/envs");
  env.push_back("PYTHONUNBUFFERED=1");
  return env;
}

Result<std::string> EtlManager::Init(const EtlSpec& spec) {
  {
    std::lock_guard lock(mu_);
    if (entries_.contains(spec.name)) return Status::AlreadyExists("etl job " + spec.name + " already exists");
    auto e = std::make_unique<Entry>();
    e->spec = spec;
    entries_[spec.name] = std::move(e);
    PersistLocked();
  }
  return Launch(spec.name);
}

Result<std::string> EtlManager::Start(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NoSuchEtl(name);
    if (it->second->stage != kAborted) {
      return Status::InvalidArgument("invalid action \"can't start ETL[" + name + "] during " + it->second->stage +
                                     " stage\"");
    }
    it->second->stage = kInitializing;
  }
  return Launch(name);
}

Result<std::string> EtlManager::Launch(const std::string& name) {
  EtlSpec spec;
  uint64_t gen = ++generation_;
  std::unique_ptr<Process> old;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NoSuchEtl(name);  // deleted meanwhile (a restart's launch)
    Entry& e = *it->second;
    spec = e.spec;
    e.generation = gen;
    e.stage = kInitializing;
    e.abort_reason.clear();
    old = std::move(e.process);
    e.Retire();
  }
  old.reset();  // an exited process's watcher is joined outside the lock
  // Fails the init: the entry stays, Aborted, with the reason (AIS keeps a failed init's entry).
  auto fail = [&](Status st, std::unique_ptr<Process> proc) -> Status {
    std::string output;
    if (proc) {
      proc->Stop();
      output = proc->Output();
      proc.reset();  // (joins its watcher, which may wait for mu_: never under it)
    }
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it != entries_.end() && it->second->generation == gen) {
      it->second->stage = kAborted;
      it->second->abort_reason = st.message();
      if (!output.empty()) it->second->last_output = std::move(output);
      PersistLocked();
    }
    LogWarning("ETL[" + name + "]: " + st.message());
    return st;
  };
  auto secret = RandomSecret(10);
  if (!secret.ok()) return fail(secret.status(), nullptr);
  auto port = FreeLoopbackPort();
  if (!port.ok()) return fail(port.status(), nullptr);
  std::error_code ec;
  const std::string work = opts_.dir + "/" + name;
  std::filesystem::create_directories(work, ec);
  if (ec) return fail(Status::IOError("ETL work dir " + work + ": " + ec.message()), nullptr);
  std::filesystem::create_directories(opts_.dir + "/envs", ec);
  auto proc = Process::Spawn({opts_.python, "-m", "aistore.etl_runtime"}, EnvFor(spec, *port, *secret), work,
                             [this, name, gen](const std::string& how) { OnExit(name, gen, how); });
  if (!proc.ok()) {
    return fail(Status::InvalidArgument("ETL[" + name + "]: " + proc.status().message() + " (--etl-python)"), nullptr);
  }
  auto running = std::make_shared<RunningEtl>(spec, *port, *secret);
  const auto deadline = std::chrono::steady_clock::now() + spec.init_timeout;
  for (;;) {
    if ((*proc)->exited()) {
      (*proc)->WaitExit(std::chrono::seconds(1));
      Status exited = Status::InvalidArgument("ETL[" + name + "] failed to start: the transformer " +
                                              (*proc)->exit_description() + ":\n" +
                                              Tail((*proc)->Output(), kInitFailureTail));
      return fail(std::move(exited), std::move(*proc));
    }
    if (running->client.Health(std::chrono::seconds(2)).ok()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      Status late = Status::IOError("ETL[" + name + "] failed to start: the transformer did not answer /health within " +
                                    "init_timeout " + FormatGoDuration(spec.init_timeout) + ":\n" +
                                    Tail((*proc)->Output(), kInitFailureTail));
      return fail(std::move(late), std::move(*proc));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second->generation != gen) {
    // Stopped or deleted while starting: this process is no one's.
    (*proc)->Stop();
    return Status::Conflict("ETL[" + name + "] was stopped while it started");
  }
  Entry& e = *it->second;
  e.process = std::move(*proc);
  e.running = std::move(running);
  e.stage = kRunning;
  e.started = std::chrono::steady_clock::now();
  e.job_id = "etl-" + RandomId(10);
  e.last_output.clear();
  PersistLocked();
  LogInfo("ETL[" + name + "] running (pid " + std::to_string(e.process->pid()) + ", " + e.running->client.base_url() +
          ")");
  return e.job_id;
}

void EtlManager::OnExit(const std::string& name, uint64_t generation, const std::string& how) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second->generation != generation || it->second->stage == kAborted) return;
  it->second->stage = kAborted;
  it->second->abort_reason = "the transformer " + how;
  it->second->Retire();
  PersistLocked();
  LogWarning("ETL[" + name + "] aborted: the transformer " + how);
}

Status EtlManager::Stop(const std::string& name) {
  std::unique_ptr<Process> proc;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NoSuchEtl(name);
    Entry& e = *it->second;
    e.generation = ++generation_;  // an init in progress sees it and gives up
    if (e.stage != kAborted) e.abort_reason = "user abort";
    e.stage = kAborted;
    e.Retire();
    proc = std::move(e.process);
    PersistLocked();
  }
  if (!proc) return Status::OK();
  proc->Stop();
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(name); it != entries_.end()) it->second->last_output = proc->Output();
  return Status::OK();
}

Status EtlManager::Delete(const std::string& name) {
  AIS_RETURN_IF_ERROR(Stop(name));
  std::lock_guard lock(mu_);
  entries_.erase(name);
  PersistLocked();
  return Status::OK();
}

nlohmann::json EtlManager::List() const {
  std::lock_guard lock(mu_);
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [name, e] : entries_) {
    const bool running = e->stage == kRunning;
    a.push_back({{"id", name},
                 {"stage", e->stage},
                 {"xaction_id", running ? e->job_id : ""},
                 {"obj_count", running ? e->obj_count : 0},
                 {"in_bytes", running ? e->in_bytes : 0},
                 {"out_bytes", running ? e->out_bytes : 0}});
  }
  return a;
}

Result<nlohmann::json> EtlManager::Details(const std::string& name, const std::string& job_id) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NoSuchEtl(name);
  const Entry& e = *it->second;
  nlohmann::json j = {{"init_msg", e.spec.ToJson()}};
  const std::vector<ObjError>* errs = &e.inline_errors;
  if (!job_id.empty()) {
    auto jt = e.job_errors.find(job_id);
    errs = jt == e.job_errors.end() ? nullptr : &jt->second;
  }
  if (errs && !errs->empty()) j["obj_errors"] = ErrorsJson(*errs);
  return j;
}

Result<std::string> EtlManager::Logs(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NoSuchEtl(name);
  const Entry& e = *it->second;
  return e.process ? e.process->Output() : e.last_output;
}

Result<std::string> EtlManager::HealthStatus(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NoSuchEtl(name);
  const Entry& e = *it->second;
  if (e.stage == kRunning) return std::string("Running");
  if (e.stage == kInitializing) return std::string("Pending");
  return Status::NotFound("etl job " + name + " is not running (" + e.abort_reason + ")");
}

Result<Process::Usage> EtlManager::Usage(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NoSuchEtl(name);
  const Entry& e = *it->second;
  if (e.stage != kRunning || !e.process) return Status::NotFound("etl job " + name + " is not running");
  Process::Usage u = e.process->ReadUsage();
  const double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - e.started).count();
  u.cpu_seconds = up > 0 ? u.cpu_seconds / up : 0;  // average cores since it started
  return u;
}

Result<std::shared_ptr<RunningEtl>> EtlManager::Find(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NoSuchEtl(name);
  if (!it->second->running) {
    return Status::NotFound("etl job " + name + " is not running (" + it->second->stage +
                            (it->second->abort_reason.empty() ? "" : ": " + it->second->abort_reason) + ")");
  }
  return it->second->running;
}

bool EtlManager::CheckSecret(const std::string& name, const std::string& secret) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  return it != entries_.end() && it->second->running && !secret.empty() && it->second->running->secret == secret;
}

void EtlManager::RecordError(const std::string& name, const std::string& job_id, ObjError err) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return;
  std::vector<ObjError>& errs = job_id.empty() ? it->second->inline_errors : it->second->job_errors[job_id];
  if (errs.size() >= kMaxObjErrors) return;
  for (const auto& e : errs) {
    if (e.msg == err.msg) return;
  }
  errs.push_back(std::move(err));
}

void EtlManager::CountInline(const std::string& name, uint64_t bytes, bool direct_put) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return;
  ++it->second->obj_count;
  if (direct_put) it->second->out_bytes += bytes;
}

void EtlManager::PersistLocked() {
  if (!restored_ || opts_.dir.empty()) return;
  nlohmann::json etls = nlohmann::json::array();
  for (const auto& [name, e] : entries_) {
    // Initializing counts as running: an init or start in progress is what was asked for.
    etls.push_back({{"init_msg", e->spec.ToJson()}, {"running", e->stage != kAborted}});
  }
  nlohmann::json doc = {{"version", 1}, {"etls", etls}};
  if (Status st = AtomicWriteFile(opts_.dir + "/" + kMetaFile, doc.dump(), /*sync=*/false); !st.ok()) {
    LogWarning("ETL: saving " + std::string(kMetaFile) + ": " + st.message());
  }
}

Status EtlManager::Restore() {
  std::error_code ec;
  std::filesystem::create_directories(opts_.dir, ec);
  // The init messages hold the users' code: the directory is the server user's alone.
  std::filesystem::permissions(opts_.dir, std::filesystem::perms::owner_all, ec);
  const std::string path = opts_.dir + "/" + kMetaFile;
  // What refuses an init (--etl off; an open server) keeps the last run's ETLs from starting too.
  const Status may_start = CheckInitAllowed();
  std::vector<std::string> to_start;
  {
    std::lock_guard lock(mu_);
    auto text = ReadFile(path);
    if (!text.ok()) {
      if (!text.status().IsNotFound()) return text.status();
      restored_ = true;
      return Status::OK();
    }
    auto doc = ParseJson(*text);
    if (!doc.ok() || !doc->is_object() || !(*doc)["etls"].is_array()) {
      return Status::Corruption(path + ": not an ETL list" + (doc.ok() ? "" : ": " + doc.status().message()));
    }
    for (const auto& item : (*doc)["etls"]) {
      if (!item.is_object() || !item.contains("init_msg")) continue;
      auto spec = ParseEtlSpec(item["init_msg"]);
      if (!spec.ok()) {
        LogWarning("ETL: " + path + ": an entry is not a valid init message (" + spec.status().message() + "): dropped");
        continue;
      }
      auto e = std::make_unique<Entry>();
      e->spec = *spec;
      const bool was_running = item.value("running", false);
      const bool running = was_running && may_start.ok();
      e->stage = running ? kInitializing : kAborted;
      if (!was_running) e->abort_reason = "stopped before the server restarted";
      else if (!running) e->abort_reason = "not restarted: " + may_start.message();
      if (running) to_start.push_back(spec->name);
      entries_[spec->name] = std::move(e);
    }
    restored_ = true;
  }
  for (const std::string& name : to_start) {
    if (!pool_.Run([this, name] { (void)Launch(name); })) {
      LogWarning("ETL[" + name + "]: not restarted (no worker thread)");
    }
  }
  return Status::OK();
}

void EtlManager::Shutdown() {
  std::vector<std::unique_ptr<Process>> procs;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, e] : entries_) {
      e->generation = ++generation_;
      e->Retire();
      if (e->process) procs.push_back(std::move(e->process));
    }
  }
  for (auto& p : procs) p->Terminate();
  for (auto& p : procs) p->Stop();
  pool_.Shutdown();
}

}  // namespace ais::etl
