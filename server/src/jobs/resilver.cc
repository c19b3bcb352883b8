#include "jobs/resilver.h"

#include "store/bck.h"
#include "util/log_ring.h"

namespace ais {

namespace {

// One walk of every bucket; the objects that failed to move.
Result<size_t> ResilverPass(Store& store, JobControl& jc) {
  size_t errors = 0;
  for (const auto& bucket : store.buckets().Names()) {  // internal buckets too: every object moves
    if (jc.aborted()) return errors;
    ObjectWalk walk{.prefix = {}, .after = {}, .headers = false, .stop = [&jc] { return jc.aborted(); }};
    Status st = store.ForEachObject(bucket, walk, [&](const WalkedObject& obj) {
      size_t moved = 0;
      uint64_t bytes = 0;
      Status one = store.ResilverObject(bucket, obj.name(), &moved, &bytes);
      if (one.ok() || one.IsNotFound() || one.code() == Status::Code::kBucketNotFound) {
        if (moved > 0) jc.Add(1, static_cast<int64_t>(bytes));
      } else {
        ++errors;
        jc.AddError(ObjectCname(bucket, obj.name()) + ": " + one.message());
        LogWarning("resilver: " + ObjectCname(bucket, obj.name()) + ": " + one.message());
      }
      return Status::OK();
    });
    if (!st.ok() && st.code() != Status::Code::kBucketNotFound) return st;
  }
  return errors;
}

}  // namespace

Status RunResilver(Store& store, JobControl& jc, uint64_t seen) {
  // Another pass while writes that began before a detach land on the leaving mountpath: they
  // stop once those writers are done (no new write chooses a leaving mountpath).
  for (int pass = 1; !jc.aborted(); ++pass) {
    const uint64_t late = store.late_writes();
    auto errors = ResilverPass(store, jc);
    if (!errors.ok()) return errors.status();
    if (jc.aborted() || seen != store.mountpath_changes()) return Status::OK();  // a newer one runs
    if (*errors > 0) {
      LogWarning("resilver: " + std::to_string(*errors) + " objects not moved: the resilver stays pending");
      return Status::OK();
    }
    if (store.ResilverDone(seen, late)) return Status::OK();
    LogInfo("resilver: writes landed on a leaving mountpath during pass " + std::to_string(pass) + ": another pass");
  }
  return Status::OK();
}

Resilver::Resilver(Store& store, JobRegistry& jobs) : store_(store), jobs_(jobs) {
  hook_->owner = this;
  store_.SetOnMountpathsChanged([hook = hook_](bool resilver) {
    if (!resilver) return;
    std::lock_guard lock(hook->mu);
    if (hook->owner != nullptr) hook->owner->Start();
  });
  if (store_.resilver_pending()) {
    LogInfo("resilver: the last mountpath change was not resilvered to the end: resilvering");
    Start();
  }
}

Resilver::~Resilver() {
  store_.SetOnMountpathsChanged(nullptr);
  std::lock_guard lock(hook_->mu);  // waits for a hook that is starting a job
  hook_->owner = nullptr;
}

std::string Resilver::Start() {
  std::lock_guard lock(mu_);
  if (!last_.empty()) jobs_.Abort(last_);
  Store& store = store_;
  const uint64_t seen = store.mountpath_changes();
  JobOptions opts;
  opts.ctlmsg = "mountpaths changed";
  last_ = jobs_.Start("resilver", "", [&store, seen](JobControl& jc) { return RunResilver(store, jc, seen); },
                      std::move(opts));
  return last_;
}

}  // namespace ais
