#include "store/bck.h"
#include "store/bucket_registry.h"

#include <chrono>
#include <mutex>
#include <random>

#include "util/file.h"
#include "util/json_text.h"

namespace ais {

Status BucketRegistry::Load() {
  std::unique_lock lock(mu_);
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    auto content = ReadFile(mps_.BmdPath(mp));
    if (!content.ok()) {
      if (content.status().IsNotFound()) continue;
      return content.status();
    }
    auto j = nlohmann::json::parse(*content, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::Corruption("damaged " + mps_.BmdPath(mp));
    auto version = j.find("version");
    auto buckets = j.find("buckets");
    if (version == j.end() || !version->is_number_unsigned() || buckets == j.end() || !buckets->is_object()) {
      return Status::Corruption("damaged " + mps_.BmdPath(mp) + ": no version or buckets");
    }
    uint64_t v = version->get<uint64_t>();
    if (v <= version_) continue;
    version_ = v;
    buckets_.clear();
    for (auto& [name, props] : buckets->items()) {
      auto p = BucketProps::FromStored(props);
      if (!p.ok()) {
        return Status::Corruption("damaged " + mps_.BmdPath(mp) + ": bucket \"" + name + "\": " + p.status().message());
      }
      buckets_[name] = std::move(*p);
    }
  }
  return Status::OK();
}

Status BucketRegistry::PersistLocked() {
  nlohmann::json doc;
  doc["version"] = ++version_;
  auto& b = doc["buckets"] = nlohmann::json::object();
  for (auto& [name, props] : buckets_) b[name] = props.ToStored();
  std::string text = JsonText(doc);
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (mps_.enabled(mp)) AIS_RETURN_IF_ERROR(AtomicWriteFile(mps_.BmdPath(mp), text, sync_));
  }
  return Status::OK();
}

Status BucketRegistry::Persist() {
  std::unique_lock lock(mu_);
  return PersistLocked();
}

Status BucketRegistry::Create(const std::string& name, const nlohmann::json& props) {
  BucketProps p;
  AIS_RETURN_IF_ERROR(p.Apply(props));
  p.created_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  p.bid = std::random_device{}();
  std::unique_lock lock(mu_);
  if (buckets_.count(name)) return Status::AlreadyExists("bucket \"" + BucketCname(name) + "\" already exists");
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (mps_.enabled(mp)) AIS_RETURN_IF_ERROR(MkdirAll(mps_.ObjectsDir(mp, name)));
  }
  buckets_[name] = p;
  Status st = PersistLocked();
  if (!st.ok()) buckets_.erase(name);
  return st;
}

Status BucketRegistry::Remove(const std::string& name) {
  std::unique_lock lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return NotFound(name);
  BucketProps saved = it->second;
  buckets_.erase(it);
  Status st = PersistLocked();
  if (!st.ok()) buckets_[name] = saved;
  return st;
}

std::optional<BucketProps> BucketRegistry::Get(const std::string& name) const {
  std::shared_lock lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint64_t> BucketRegistry::Access(const std::string& name) const {
  std::shared_lock lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return std::nullopt;
  return it->second.access;
}

Status BucketRegistry::Update(const std::string& name, const nlohmann::json& patch) {
  std::unique_lock lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return NotFound(name);
  BucketProps saved = it->second;
  AIS_RETURN_IF_ERROR(it->second.Apply(patch));
  Status st = PersistLocked();
  if (!st.ok()) it->second = saved;
  return st;
}

std::vector<std::string> BucketRegistry::Names() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (auto& [name, _] : buckets_) out.push_back(name);
  return out;
}

}  // namespace ais
