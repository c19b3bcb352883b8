#include "store/volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "util/json_text.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kStateFile = "/.ais.vmd.json";

}  // namespace

Volume::Volume(std::vector<std::string> paths, bool fsync, int fshc_interval_ms)
    : mps_(std::move(paths)), fsync_(fsync), fshc_interval_ms_(fshc_interval_ms) {}

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
  roots_.resize(mps_.size());
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    AIS_RETURN_IF_ERROR(MkdirAll(mps_.WorkDir(mp)));
    struct stat st{};
    if (::stat(mps_.paths()[mp].c_str(), &st) != 0) return Status::FromErrno(errno, "stat mountpath");
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

Status Volume::LoadState() {
  uint64_t best = 0;
  std::vector<std::string> disabled;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    auto content = ReadFile(mps_.paths()[mp] + kStateFile);
    if (!content.ok()) continue;  // absent, or on a broken disk: the other copies decide
    auto j = nlohmann::json::parse(*content, nullptr, false);
    if (!j.is_object() || !j.contains("version") || !j["version"].is_number_unsigned() ||
        !j.contains("disabled") || !j["disabled"].is_array()) {
      continue;
    }
    uint64_t v = j["version"].get<uint64_t>();
    if (v <= best) continue;
    best = v;
    disabled.clear();
    for (auto& p : j["disabled"]) {
      if (p.is_string()) disabled.push_back(p.get<std::string>());
    }
    auto id = [&j](const char* key) {
      auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    cluster_uuid_ = id("cluster_uuid");
    daemon_id_ = id("daemon_id");
    // Exact placement holds on only for the same set of mountpaths (HRW ranks by it).
    auto exact = j.find("placement_exact");
    auto listed = j.find("mountpaths");
    std::vector<std::string> was;
    if (listed != j.end() && listed->is_array()) {
      for (auto& p : *listed) {
        if (p.is_string()) was.push_back(p.get<std::string>());
      }
    }
    std::vector<std::string> now = mps_.paths();
    std::sort(was.begin(), was.end());
    std::sort(now.begin(), now.end());
    off_primary_ = !(exact != j.end() && exact->is_boolean() && exact->get<bool>() && was == now);
  }
  if (best == 0) off_primary_ = false;  // a new store (Store::Open checks that it holds no data)
  std::lock_guard lock(state_mu_);
  state_version_ = best;
  for (auto& p : disabled) {
    if (auto mp = mps_.Find(p)) mps_.SetEnabled(*mp, false);
  }
  if (mps_.num_disabled() == mps_.size()) {
    for (size_t mp = 0; mp < mps_.size(); ++mp) mps_.SetEnabled(mp, true);  // never start with none
  }
  return Status::OK();
}

Status Volume::SaveState() {
  nlohmann::json doc;
  doc["version"] = ++state_version_;
  doc["cluster_uuid"] = cluster_uuid_;
  doc["daemon_id"] = daemon_id_;
  doc["disabled"] = nlohmann::json::array();
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) doc["disabled"].push_back(mps_.paths()[mp]);
  }
  doc["mountpaths"] = mps_.paths();
  doc["placement_exact"] = !off_primary_.load();
  std::string text = JsonText(doc);
  Status first;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    Status st = AtomicWriteFile(mps_.paths()[mp] + kStateFile, text, fsync_);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

MountpathState Volume::Get() const {
  MountpathState out;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    (mps_.enabled(mp) ? out.available : out.disabled).push_back(mps_.paths()[mp]);
  }
  return out;
}

Status Volume::Disable(const std::string& path, const std::string& reason) {
  auto mp = mps_.Find(path);
  if (!mp) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::lock_guard lock(state_mu_);
  off_primary_ = true;  // from now on, a write may go to a lower-ranked mountpath
  if (!mps_.SetEnabled(*mp, false)) return Status::OK();
  LogError("mountpath " + mps_.paths()[*mp] + " disabled: " + reason);
  Status st = SaveState();
  if (!st.ok()) LogWarning("mountpath state not saved: " + st.message());
  return Status::OK();
}

Status Volume::Enable(const std::string& path, const std::function<Status(size_t mp)>& reconcile, bool* enabled) {
  *enabled = false;
  auto mp = mps_.Find(path);
  if (!mp) return Status::NotFound("mountpath \"" + path + "\" does not exist");
  std::lock_guard lock(state_mu_);
  if (mps_.enabled(*mp)) return Status::OK();
  const std::string& root = mps_.paths()[*mp];
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
  Status saved = SaveState();
  if (!saved.ok()) LogWarning("mountpath state not saved: " + saved.message());
  return Status::OK();
}

bool Volume::Check(size_t mp, bool write_probe) {
  if (!mps_.enabled(mp)) return false;
  const std::string& root = mps_.paths()[mp];
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
