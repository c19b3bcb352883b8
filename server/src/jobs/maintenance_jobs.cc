#include "jobs/maintenance_jobs.h"

#include <chrono>
#include <utility>

#include "jobs/eviction_plan.h"
#include "store/bck.h"
#include "util/clock.h"
#include "util/log_ring.h"

namespace ais {
namespace {

constexpr auto kStaleTemp = std::chrono::hours(24);
// What deleted buckets left is removed once this old (AIS space.dont_cleanup_time's default).
constexpr auto kDontCleanupTime = std::chrono::minutes(30);
// Objects one lru walk keeps as candidates (AIS GCBatchSizeDflt); more: another walk.
constexpr size_t kLruBatch = 32 * 1024;

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

// The bytes `meta` holds on each mountpath: its object file where the walk found it (the
// header, and the data of a monolithic object), its chunks where placement puts them, and its
// mirror copies (`copies` - 1, whole objects) on their slots: eviction frees all of them.
std::vector<std::pair<size_t, uint64_t>> BytesOn(const Mountpaths& mps, const std::string& bucket, size_t mp,
                                                 const std::string& name, const ObjectMeta& meta, size_t copies) {
  std::vector<std::pair<size_t, uint64_t>> out;
  for (size_t slot : mps.MirrorSlots(bucket, name, mp, copies)) out.emplace_back(slot, meta.size + kDataAlign);
  if (!meta.chunked()) {
    out.emplace_back(mp, meta.size + kDataAlign);
    return out;
  }
  out.emplace_back(mp, kDataAlign);
  for (size_t k = 0; k < meta.chunk_sizes.size(); ++k) {
    out.emplace_back(mps.ForChunk(meta.upload_id, static_cast<uint32_t>(k + 1)), meta.chunk_sizes[k]);
  }
  return out;
}

// The buckets whose cached objects may be evicted: remote ones with lru.enabled, of `named`
// (all when empty).
std::vector<std::string> EvictableBuckets(Store& store, const std::vector<std::string>& named) {
  const std::vector<std::string> all = named.empty() ? store.buckets().Names() : named;
  std::vector<std::string> out;
  for (const auto& b : all) {
    auto props = store.buckets().Get(b);
    if (props && props->lru_enabled_for(IsRemoteKey(b))) out.push_back(b);
  }
  return out;
}

}  // namespace

Status RunLru(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  const SpaceConfig cfg = store.capacity().config();
  const std::vector<std::string> evictable = EvictableBuckets(store, buckets);
  for (int round = 0; !jc.aborted(); ++round) {
    EvictionPlan plan(store.capacity().Refresh(/*notify=*/false), cfg, store.mountpaths().size(), NowNs(), kLruBatch);
    if (!plan.Needed()) {
      if (round == 0) LogInfo("lru: used capacity below the high watermark, nothing to do");
      return Status::OK();
    }
    if (round == 0) LogInfo("lru: freeing " + std::to_string(plan.bytes_needed()) + " bytes");
    for (const auto& b : evictable) {
      auto props = store.buckets().Get(b);
      const size_t copies = props ? props->copies() : 1;
      ObjectWalk walk{.prefix = {}, .after = {}, .headers = true, .stop = [&jc] { return jc.aborted(); }};
      Status st = store.ForEachObject(b, walk, [&](const WalkedObject& obj) {
        plan.Offer({.bucket = b, .name = obj.name(), .version = obj.meta().version,
                    .atime_ns = store.AccessTime(b, obj.Named()), .size = obj.meta().size,
                    .bytes_on = BytesOn(store.mountpaths(), b, obj.mp(), obj.name(), obj.meta(), copies)});
        return Status::OK();
      });
      if (!st.ok() && st.code() != Status::Code::kBucketNotFound) return st;
    }
    const bool more = plan.truncated();
    uint64_t evicted = 0;
    for (const EvictionCandidate& c : plan.TakeOldestFirst()) {
      if (jc.aborted()) return Status::OK();
      if (!plan.Helps(c)) continue;
      uint64_t bytes = 0;
      Status st = store.Evict(c.bucket, c.name, c.version, c.atime_ns, &bytes);
      if (st.ok()) {
        plan.Evicted(c);
        jc.Add(1, static_cast<int64_t>(bytes));
        store.capacity().AddEvicted(1, bytes);
        ++evicted;
      } else if (st.code() != Status::Code::kConflict && !st.IsNotFound()) {  // conflict: read or changed meanwhile
        jc.AddError(ObjectCname(c.bucket, c.name) + ": " + st.message());
      }
      if (!plan.Needed()) break;
    }
    // Another walk only if this one had more candidates than it kept and evicting helped.
    if (!more || evicted == 0) return Status::OK();
  }
  return Status::OK();
}

Status RunCleanup(Store& store, JobControl& jc) {
  auto stop = [&jc] { return jc.aborted(); };
  auto removed = [&jc](uint64_t bytes) { jc.Add(1, static_cast<int64_t>(bytes)); };
  AIS_RETURN_IF_ERROR(store.RemoveStaleTemps(kStaleTemp, stop, removed));
  AIS_RETURN_IF_ERROR(store.RemoveOrphanedChunks(kDontCleanupTime, stop, removed));
  return store.RemoveLeftovers(kDontCleanupTime, stop, removed);
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

Status RunMakeNCopies(Store& store, JobControl& jc, const std::string& bucket, size_t copies) {
  return VisitObjects(store, jc, {bucket}, true, [&](const std::string& b, const WalkedObject& obj) {
    Status st = store.SyncCopies(b, obj.name(), copies);
    if (st.ok()) {
      jc.Add(1, static_cast<int64_t>(obj.meta().size));
    } else if (!st.IsNotFound()) {  // not found: deleted meanwhile
      jc.AddError(ObjectCname(b, obj.name()) + ": " + st.message());
    }
  });
}

}  // namespace ais
