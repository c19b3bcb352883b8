#include "store/volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kStateFile = "/.ais.vmd.json";

}  // namespace

Volume::Volume(std::vector<std::string> paths, bool fsync, int fshc_interval_ms)
    : mps_(std::move(paths)), flag_paths_(mps_.Attached()), fsync_(fsync), fshc_interval_ms_(fshc_interval_ms) {}

Volume::~Volume() {
  if (!fshc_.joinable()) return;
  {
    std::lock_guard lock(fshc_mu_);
    fshc_stop_ = true;
  }
  fshc_cv_.notify_all();
  fshc_.join();
}

Status Volume::Open() {
  AIS_RETURN_IF_ERROR(LoadState());
  fresh_ = state_version_ == 0;
  roots_.resize(Mountpaths::kMaxSlots);
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    AIS_RETURN_IF_ERROR(MkdirAll(mps_.WorkDir(mp)));
    struct stat st{};
    if (::stat(mps_.path(mp).c_str(), &st) != 0) return Status::FromErrno(errno, "stat mountpath");
    roots_[mp] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  if (cluster_uuid_.empty() || daemon_id_.empty()) {  // the first start
    if (cluster_uuid_.empty()) cluster_uuid_ = RandomId(10);
    if (daemon_id_.empty()) daemon_id_ = RandomId(8);
    std::lock_guard lock(state_mu_);
    // Not fatal: a mountpath that cannot be written is found by the health check; the ids then
    // are new on the next start.
    if (Status st = SaveState(); !st.ok()) LogError("saving the node identity: " + st.message());
  }
  return Status::OK();
}

void Volume::AssumeOffPrimary() {
  std::lock_guard lock(state_mu_);
  off_primary_ = true;
  if (Status st = SaveState(); !st.ok()) LogError("saving the mountpath state: " + st.message());
}

void Volume::StartHealthChecks() {
  if (fshc_interval_ms_ > 0) fshc_ = std::thread([this] { FshcLoop(); });
}

namespace {

std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (auto& p : *it) {
    if (p.is_string()) out.push_back(p.get<std::string>());
  }
  return out;
}

bool IsDir(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// AIS cmn.ValidateMpath: absolute, cleaned (lexically), not the root, at most 255 bytes.
Result<std::string> CleanMountpath(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument("invalid mountpath \"" + path + "\": mountpath must be an absolute path");
  }
  std::string clean = std::filesystem::path(path).lexically_normal().string();
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  if (clean == "/") return Status::InvalidArgument("invalid mountpath \"" + path + "\": root directory is not a valid mountpath");
  if (clean.size() > 255) {
    return Status::InvalidArgument("invalid mountpath \"" + path.substr(0, 64) + "...\": mountpath length cannot exceed 255");
  }
  return clean;
}

}  // namespace

Status Volume::LoadState() {
  // The newest state file wins. Read from the flags' paths and from every path a newer one
  // lists: with every flag path detached, the newest state is on attached mountpaths only.
  uint64_t best = 0;
  nlohmann::json doc;
  std::set<std::string> tried;
  std::vector<std::string> todo = flag_paths_;
  while (!todo.empty()) {
    const std::string p = todo.back();
    todo.pop_back();
    if (!tried.insert(p).second) continue;
    auto content = ReadFile(p + kStateFile);
    if (!content.ok()) continue;  // absent, or on a broken disk: the other copies decide
    auto j = nlohmann::json::parse(*content, nullptr, false);
    if (!j.is_object() || !j.contains("version") || !j["version"].is_number_unsigned() ||
        !j.contains("disabled") || !j["disabled"].is_array()) {
      continue;
    }
    uint64_t v = j["version"].get<uint64_t>();
    if (v <= best) continue;
    best = v;
    doc = std::move(j);
    for (auto& listed : Strings(doc, "mountpaths")) todo.push_back(listed);
  }
  std::lock_guard lock(state_mu_);
  state_version_ = best;
  if (best == 0) {
    off_primary_ = false;  // a new store (Store::Open checks that it holds no data)
    return Status::OK();
  }
  auto id = [&doc](const char* key) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  cluster_uuid_ = id("cluster_uuid");
  daemon_id_ = id("daemon_id");
  // The set as run-time attach and detach left it (the flags give only where it started).
  for (auto& p : Strings(doc, "detached")) {
    if (auto mp = mps_.Find(p)) {
      mps_.SetState(*mp, Mountpaths::State::kDetached);
      LogInfo("mountpath " + p + " (--mountpath) was detached at run time: not used (attach it to use it again)");
    }
  }
  for (auto& p : Strings(doc, "attached")) {
    if (auto mp = mps_.Find(p); mp && mps_.attached(*mp)) continue;
    const bool there = IsDir(p);
    if (!mps_.Add(p, there ? Mountpaths::State::kEnabled : Mountpaths::State::kDisabled).ok()) continue;
    if (there) {
      LogInfo("mountpath " + p + " attached at run time: in use");
    } else {
      LogError("mountpath " + p + " attached at run time is gone: disabled (detach it to forget it)");
    }
  }
  for (auto& p : Strings(doc, "disabled")) {
    if (auto mp = mps_.Find(p); mp && mps_.attached(*mp)) mps_.SetEnabled(*mp, false);
  }
  for (auto& p : Strings(doc, "leaving")) {
    if (auto mp = mps_.Find(p); mp && mps_.placeable(*mp)) mps_.SetState(*mp, Mountpaths::State::kLeaving);
  }
  auto pending = doc.find("resilver_pending");
  resilver_pending_ = pending != doc.end() && pending->is_boolean() && pending->get<bool>();
  // Exact placement holds on only for the same set of mountpaths (HRW ranks by it).
  auto exact = doc.find("placement_exact");
  std::vector<std::string> was = Strings(doc, "mountpaths");
  std::vector<std::string> now = mps_.Attached();
  std::sort(was.begin(), was.end());
  std::sort(now.begin(), now.end());
  off_primary_ = !(exact != doc.end() && exact->is_boolean() && exact->get<bool>() && was == now);
  if (mps_.count() == 0) {  // every path detached and the attached ones forgotten: the flags again
    for (auto& p : flag_paths_) (void)mps_.Add(p);
    off_primary_ = true;
  }
  if (mps_.num_placeable() == 0) {  // never start with none
    for (size_t mp = 0; mp < mps_.size(); ++mp) {
      if (mps_.attached(mp)) mps_.SetEnabled(mp, true);
    }
  }
  return Status::OK();
}

Status Volume::SaveState(const std::vector<size_t>& also) {
  nlohmann::json doc;
  doc["version"] = ++state_version_;
  doc["cluster_uuid"] = cluster_uuid_;
  doc["daemon_id"] = daemon_id_;
  doc["disabled"] = nlohmann::json::array();
  doc["leaving"] = nlohmann::json::array();
  doc["attached"] = nlohmann::json::array();
  doc["detached"] = nlohmann::json::array();
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    const std::string& p = mps_.path(mp);
    const bool flag = std::find(flag_paths_.begin(), flag_paths_.end(), p) != flag_paths_.end();
    switch (mps_.state(mp)) {
      case Mountpaths::State::kDisabled: doc["disabled"].push_back(p); break;
      case Mountpaths::State::kLeaving: doc["leaving"].push_back(p); break;
      case Mountpaths::State::kDetached:
        if (flag) doc["detached"].push_back(p);
        continue;
      case Mountpaths::State::kEnabled: break;
    }
    if (!flag) doc["attached"].push_back(p);
  }
  doc["mountpaths"] = mps_.Attached();
  doc["placement_exact"] = !off_primary_.load();
  doc["resilver_pending"] = resilver_pending_.load();
  std::string text = JsonText(doc);
  Status first;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    const bool extra = std::find(also.begin(), also.end(), mp) != also.end();
    if (!mps_.enabled(mp) && !extra) continue;
    if (!SameRoot(mp)) continue;  // unmounted under us: not written into what lies beneath (FSHC disables it)
    Status st = AtomicWriteFile(mps_.path(mp) + kStateFile, text, fsync_);
    if (!st.ok() && first.ok() && !extra) first = st;
  }
  return first;
}

bool Volume::SameRoot(size_t mp) {
  struct stat st{};
  if (::stat(mps_.path(mp).c_str(), &st) != 0) return false;
  std::lock_guard lock(fshc_mu_);
  if (mp >= roots_.size()) return true;
  const RootId& want = roots_[mp];
  return want.ino == 0 || (static_cast<uint64_t>(st.st_dev) == want.dev && static_cast<uint64_t>(st.st_ino) == want.ino);
}

void Volume::Changed(std::unique_lock<std::mutex>& lock, bool resilver, const std::vector<size_t>& also) {
  changes_.fetch_add(1, std::memory_order_acq_rel);
  if (resilver) resilver_pending_ = true;
  if (Status st = SaveState(also); !st.ok()) LogWarning("mountpath state not saved: " + st.message());
  auto fn = on_change_;
  lock.unlock();
  if (fn) fn(resilver);
}

MountpathState Volume::Get() const {
  MountpathState out;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    switch (mps_.state(mp)) {
      case Mountpaths::State::kEnabled: out.available.push_back(mps_.path(mp)); break;
      case Mountpaths::State::kLeaving: out.waiting_dd.push_back(mps_.path(mp)); break;
      case Mountpaths::State::kDisabled: out.disabled.push_back(mps_.path(mp)); break;
      case Mountpaths::State::kDetached: break;
    }
  }
  return out;
}

Status Volume::Disable(const std::string& path, const std::string& reason, bool resilver) {
  auto mp = mps_.Find(path);
  if (!mp || !mps_.attached(*mp)) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::unique_lock lock(state_mu_);
  off_primary_ = true;  // from now on, a write may go to a lower-ranked mountpath
  if (!mps_.SetEnabled(*mp, false)) return Status::OK();
  LogError("mountpath " + mps_.path(*mp) + " disabled: " + reason);
  Changed(lock, resilver);
  return Status::OK();
}

Status Volume::Enable(const std::string& path, const std::function<Status(size_t mp)>& reconcile, bool* enabled) {
  *enabled = false;
  auto mp = mps_.Find(path);
  if (!mp || !mps_.attached(*mp)) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::unique_lock lock(state_mu_);
  if (mps_.placeable(*mp)) return Status::OK();
  const std::string& root = mps_.path(*mp);
  if (mps_.state(*mp) == Mountpaths::State::kLeaving) {  // AIS: re-enabled during the dd-transition
    mps_.SetEnabled(*mp, true);
    *enabled = true;
    LogInfo("mountpath " + root + " enabled again (its detach is called off)");
    Changed(lock, true);
    return Status::OK();
  }
  struct stat st{};
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError("cannot enable mountpath " + root + ": " + (errno ? std::strerror(errno) : "not a directory"));
  }
  AIS_RETURN_IF_ERROR(MkdirAll(mps_.WorkDir(*mp)));
  {
    std::lock_guard fl(fshc_mu_);
    roots_[*mp] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  AIS_RETURN_IF_ERROR(reconcile(*mp));
  mps_.SetEnabled(*mp, true);
  *enabled = true;
  LogInfo("mountpath " + root + " enabled");
  Changed(lock, true);
  return Status::OK();
}

Status Volume::Attach(const std::string& path, bool* added) {
  *added = false;
  auto clean = CleanMountpath(path);
  if (!clean.ok()) return clean.status();
  std::unique_lock lock(state_mu_);
  if (auto mp = mps_.Find(*clean); mp && mps_.attached(*mp)) {
    switch (mps_.state(*mp)) {
      case Mountpaths::State::kLeaving:  // AIS: attach interrupts the dd-transition
        mps_.SetEnabled(*mp, true);
        *added = true;
        LogInfo("mountpath " + *clean + " attached again (its detach is called off)");
        Changed(lock, true);
        return Status::OK();
      case Mountpaths::State::kDisabled:
        return Status::InvalidArgument("mountpath " + *clean +
                                       " exists and is currently disabled (hint: did you want to enable it?)");
      default:
        return Status::InvalidArgument("duplicated mountpath " + *clean + ": already attached");
    }
  }
  struct stat st{};
  if (::stat(clean->c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound("mountpath " + *clean + " does not exist");
    return Status::InvalidArgument("mountpath " + *clean + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument("mountpath " + *clean + " is not a directory");
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.attached(mp)) continue;
    const std::string& p = mps_.path(mp);
    if (clean->starts_with(p + "/")) {
      return Status::InvalidArgument("mountpath " + *clean + " is nested in mountpath " + p);
    }
    if (p.starts_with(*clean + "/")) {
      return Status::InvalidArgument("mountpath " + *clean + " holds mountpath " + p + " (nested mountpaths)");
    }
  }
  const std::string work = *clean + "/.ais.work";
  if (Status made = MkdirAll(work); !made.ok()) {
    return Status::InvalidArgument("mountpath " + *clean + " cannot be written: " + made.message());
  }
  const std::string probe = work + "/attach-" + RandomId(8) + ".tmp";
  if (Status w = AtomicWriteFile(probe, "x", fsync_); !w.ok()) {
    return Status::InvalidArgument("mountpath " + *clean + " cannot be written: " + w.message());
  }
  ::unlink(probe.c_str());
  // Published disabled until its root is recorded for the health check, then enabled.
  auto mp = mps_.Add(*clean, Mountpaths::State::kDisabled);
  if (!mp.ok()) return mp.status();
  {
    std::lock_guard fl(fshc_mu_);
    roots_[*mp] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  off_primary_ = true;  // placement changed: objects may be off their new primary
  mps_.SetEnabled(*mp, true);
  *added = true;
  LogInfo("mountpath " + *clean + " attached");
  Changed(lock, true);
  return Status::OK();
}

Status Volume::Detach(const std::string& path, bool resilver) {
  auto clean = CleanMountpath(path);
  if (!clean.ok()) return clean.status();
  std::unique_lock lock(state_mu_);
  auto mp = mps_.Find(*clean);
  if (!mp || !mps_.attached(*mp)) return Status::NotFound("mountpath " + *clean + " does not exist");
  const Mountpaths::State was = mps_.state(*mp);
  if (was == Mountpaths::State::kEnabled && mps_.num_placeable() == 1) {
    return Status::InvalidArgument("cannot detach mountpath " + *clean + ": it is the last enabled mountpath");
  }
  off_primary_ = true;
  if (resilver && was == Mountpaths::State::kEnabled) {
    mps_.SetState(*mp, Mountpaths::State::kLeaving);
    LogInfo("mountpath " + *clean + " leaving: detached once resilver moved its objects off");
    Changed(lock, true);
    return Status::OK();
  }
  if (resilver && was == Mountpaths::State::kLeaving) return Status::OK();  // already on its way
  mps_.SetState(*mp, Mountpaths::State::kDetached);
  LogInfo("mountpath " + *clean + " detached");
  Changed(lock, false, {*mp});
  return Status::OK();
}

bool Volume::ResilverDone(uint64_t change_seen, uint64_t late_seen) {
  std::unique_lock commits(commit_mu_);
  std::lock_guard lock(state_mu_);
  if (changes_.load(std::memory_order_acquire) != change_seen) return false;  // a newer change: its resilver ends it
  if (late_writes_.load(std::memory_order_acquire) != late_seen) return false;
  std::vector<size_t> gone;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (mps_.state(mp) != Mountpaths::State::kLeaving) continue;
    mps_.SetState(mp, Mountpaths::State::kDetached);
    gone.push_back(mp);
    LogInfo("mountpath " + mps_.path(mp) + " detached: resilver moved its objects off");
  }
  resilver_pending_ = false;
  if (Status st = SaveState(gone); !st.ok()) LogWarning("mountpath state not saved: " + st.message());
  return true;
}

bool Volume::Check(size_t mp, bool write_probe) {
  if (!mps_.enabled(mp)) return false;
  const std::string& root = mps_.path(mp);
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
  (void)Disable(root, reason);
  return false;
}

void Volume::FshcLoop() {
  std::unique_lock lock(fshc_mu_);
  while (!fshc_cv_.wait_for(lock, std::chrono::milliseconds(fshc_interval_ms_), [this] { return fshc_stop_; })) {
    lock.unlock();
    for (size_t mp = 0; mp < mps_.size(); ++mp) {
      if (mps_.enabled(mp)) (void)Check(mp, false);
    }
    lock.lock();
  }
}

Result<UniqueFd> Volume::OpenObjectFile(const std::string& bucket, const std::string& name, size_t* mp) const {
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

std::optional<size_t> Volume::LocateObject(const std::string& bucket, const std::string& name) const {
  size_t primary = mps_.PrimaryFor(bucket, name);
  if (::access(mps_.ObjectPath(primary, bucket, name).c_str(), F_OK) == 0) return primary;
  if (!MayBeOffPrimary()) return std::nullopt;
  for (size_t m : mps_.Ranked(bucket, name)) {
    if (m == primary || !mps_.enabled(m)) continue;
    if (::access(mps_.ObjectPath(m, bucket, name).c_str(), F_OK) == 0) return m;
  }
  return std::nullopt;
}

}  // namespace ais
