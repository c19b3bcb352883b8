#include "jobs/maintenance_jobs.h"

#include <chrono>

#include "util/log_ring.h"

namespace ais {
namespace {

constexpr auto kStaleTemp = std::chrono::hours(24);

std::vector<std::string> Targets(Store& store, const std::vector<std::string>& buckets) {
  if (!buckets.empty()) return buckets;
  std::vector<std::string> out;
  for (auto& b : store.buckets().Names()) {
    if (!b.starts_with('.')) out.push_back(b);
  }
  return out;
}

// Walks each bucket's objects (Store::ForEachObject) until the job is aborted; a bucket
// destroyed meanwhile is skipped.
Status VisitObjects(Store& store, JobControl& jc, const std::vector<std::string>& buckets, bool headers,
                    const std::function<void(const std::string&, const WalkedObject&)>& fn) {
  for (const auto& b : Targets(store, buckets)) {
    if (jc.aborted()) return Status::OK();
    ObjectWalk walk{.prefix = {}, .after = {}, .headers = headers, .stop = [&jc] { return jc.aborted(); }};
    Status st = store.ForEachObject(b, walk, [&](const WalkedObject& obj) {
      fn(b, obj);
      return Status::OK();
    });
    if (!st.ok() && st.code() != Status::Code::kBucketNotFound) return st;
  }
  return Status::OK();
}

}  // namespace

Status RunLru(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  return VisitObjects(store, jc, buckets, true, [](const std::string&, const WalkedObject&) {});
}

Status RunCleanup(Store& store, JobControl& jc) {
  return store.RemoveStaleTemps(kStaleTemp, [&jc] { return jc.aborted(); },
                                [&jc](uint64_t bytes) { jc.Add(1, static_cast<int64_t>(bytes)); });
}

Status RunWarmup(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  return VisitObjects(store, jc, buckets, true, [&](const std::string&, const WalkedObject& obj) {
    jc.Add(1, static_cast<int64_t>(obj.meta().size));
  });
}

Status RunScrub(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  // Disabled mountpaths are not walked: their objects are unavailable, not damaged.
  return VisitObjects(store, jc, buckets, false, [&](const std::string& b, const WalkedObject& obj) {
    const std::string& name = obj.name();
    std::string damage;
    uint64_t bytes = 0;
    Status st = store.ScrubObject(b, obj.mp(), name, obj.path(), &damage, &bytes);
    if (!st.ok()) {
      jc.AddError("ais://" + b + "/" + name + ": " + st.message());
      LogError("scrub: ais://" + b + "/" + name + ": " + st.message());
      return;
    }
    jc.Add(1, static_cast<int64_t>(bytes));
    if (!damage.empty()) {
      jc.AddError("quarantined ais://" + b + "/" + name + ": " + damage);
      LogWarning("scrub: quarantined ais://" + b + "/" + name + ": " + damage);
    }
  });
}

}  // namespace ais
