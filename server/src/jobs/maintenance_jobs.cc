#include "jobs/maintenance_jobs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "store/object_scanner.h"
#include "store/sorted_walker.h"
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

// Calls fn for each object of each bucket; a bucket destroyed meanwhile is skipped.
Status ForEachObject(Store& store, JobControl& jc, const std::vector<std::string>& buckets,
                     const std::function<void(const std::string&, const ObjectMeta&)>& fn) {
  for (const auto& b : Targets(store, buckets)) {
    if (!store.GetBucket(b).ok()) continue;
    ObjectScanner scan(store.mountpaths(), b, "", "");
    ObjectMeta m;
    for (;;) {
      if (jc.aborted()) return Status::OK();
      auto more = scan.Next(&m);
      if (!more.ok()) return more.status();
      if (!*more) break;
      fn(b, m);
    }
  }
  return Status::OK();
}

}  // namespace

Status RunLru(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  return ForEachObject(store, jc, buckets, [](const std::string&, const ObjectMeta&) {});
}

Status RunCleanup(Store& store, JobControl& jc) {
  namespace fs = std::filesystem;
  const auto cutoff = fs::file_time_type::clock::now() - kStaleTemp;
  const Mountpaths& mps = store.mountpaths();
  for (size_t mp = 0; mp < mps.size(); ++mp) {
    std::error_code ec;
    for (fs::directory_iterator it(mps.WorkDir(mp), ec), end; !ec && it != end; it.increment(ec)) {
      if (jc.aborted()) return Status::OK();
      std::error_code fec;
      const fs::path& p = it->path();
      if (p.extension() != ".tmp" || !it->is_regular_file(fec)) continue;
      auto mtime = it->last_write_time(fec);
      if (fec || mtime > cutoff) continue;
      uint64_t size = it->file_size(fec);
      if (::unlink(p.c_str()) == 0) jc.Add(1, static_cast<int64_t>(size));
    }
  }
  return Status::OK();
}

Status RunWarmup(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  return ForEachObject(store, jc, buckets, [&](const std::string&, const ObjectMeta& m) {
    jc.Add(1, static_cast<int64_t>(m.size));
  });
}

Status RunScrub(Store& store, JobControl& jc, const std::vector<std::string>& buckets) {
  const Mountpaths& mps = store.mountpaths();
  for (const auto& b : Targets(store, buckets)) {
    if (!store.GetBucket(b).ok()) continue;
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      if (!mps.enabled(mp)) continue;  // its objects are unavailable, not damaged
      SortedWalker walk(mps.ObjectsDir(mp, b), "", "");
      std::string name, path, damage;
      for (;;) {
        if (jc.aborted()) return Status::OK();
        auto more = walk.Next(&name, &path);
        if (!more.ok()) return more.status();
        if (!*more) break;
        uint64_t bytes = 0;
        Status st = store.ScrubObject(b, mp, name, path, &damage, &bytes);
        if (!st.ok()) {
          jc.AddError("ais://" + b + "/" + name + ": " + st.message());
          LogError("scrub: ais://" + b + "/" + name + ": " + st.message());
          continue;
        }
        jc.Add(1, static_cast<int64_t>(bytes));
        if (!damage.empty()) {
          jc.AddError("quarantined ais://" + b + "/" + name + ": " + damage);
          LogWarning("scrub: quarantined ais://" + b + "/" + name + ": " + damage);
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace ais
