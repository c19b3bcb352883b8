#include "store/mountpaths.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "store/bck.h"
#include "store/names.h"

namespace ais {

Mountpaths::Mountpaths(std::vector<std::string> paths) : slots_(std::make_unique<Slot[]>(kMaxSlots)) {
  for (auto& p : paths) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) (void)Add(p);
}

Result<size_t> Mountpaths::Add(const std::string& path, State s) {
  if (auto mp = Find(path)) {
    SetState(*mp, s);
    return *mp;
  }
  const size_t mp = used_.load(std::memory_order_relaxed);
  if (mp >= kMaxSlots) {
    return Status::InvalidArgument("too many mountpaths: at most " + std::to_string(kMaxSlots) +
                                   " distinct paths per run (restart to reuse detached slots)");
  }
  Slot& slot = slots_[mp];
  slot.path = path;
  slot.seed = XXH64(path.data(), path.size(), 0);
  slot.state.store(s, std::memory_order_relaxed);
  CountState(s, +1);
  used_.store(mp + 1, std::memory_order_release);  // publishes the slot
  return mp;
}

void Mountpaths::CountState(State s, int delta) {
  if (s == State::kDisabled) num_disabled_.fetch_add(static_cast<size_t>(delta), std::memory_order_acq_rel);
  if (s == State::kEnabled) num_placeable_.fetch_add(static_cast<size_t>(delta), std::memory_order_acq_rel);
  if (s == State::kLeaving) num_leaving_.fetch_add(static_cast<size_t>(delta), std::memory_order_acq_rel);
}

void Mountpaths::SetState(size_t mp, State s) {
  State was = slots_[mp].state.exchange(s, std::memory_order_acq_rel);
  if (was == s) return;
  CountState(was, -1);
  CountState(s, +1);
}

bool Mountpaths::SetEnabled(size_t mp, bool on) {
  const State want = on ? State::kEnabled : State::kDisabled;
  if (state(mp) == want) return false;
  SetState(mp, want);
  return true;
}

size_t Mountpaths::count() const {
  size_t n = 0;
  for (size_t mp = 0, used = size(); mp < used; ++mp) n += attached(mp) ? 1 : 0;
  return n;
}

std::vector<std::string> Mountpaths::paths() const {
  std::vector<std::string> out;
  for (size_t mp = 0, used = size(); mp < used; ++mp) out.push_back(slots_[mp].path);
  return out;
}

std::vector<std::string> Mountpaths::Attached() const {
  std::vector<std::string> out;
  for (size_t mp = 0, used = size(); mp < used; ++mp) {
    if (attached(mp)) out.push_back(slots_[mp].path);
  }
  return out;
}

std::optional<size_t> Mountpaths::Find(std::string_view path) const {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  for (size_t mp = 0, used = size(); mp < used; ++mp) {
    if (slots_[mp].path == path) return mp;
  }
  return std::nullopt;
}

std::vector<size_t> Mountpaths::Ranked(std::string_view bucket, std::string_view object) const {
  std::string key;
  key.reserve(bucket.size() + object.size() + 1);
  key.append(bucket).push_back('/');
  key.append(object);
  std::vector<std::pair<uint64_t, size_t>> scored;
  const size_t used = size();
  scored.reserve(used);
  for (size_t i = 0; i < used; ++i) {
    if (attached(i)) scored.emplace_back(XXH64(key.data(), key.size(), slots_[i].seed), i);
  }
  // Same order as the single best choice below: higher score first, lower index on a tie.
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<size_t> out;
  out.reserve(scored.size());
  for (auto& [score, i] : scored) out.push_back(i);
  return out;
}

size_t Mountpaths::PrimaryFor(std::string_view bucket, std::string_view object) const {
  const size_t used = size();
  if (used == 1) return 0;
  std::string key;
  key.reserve(bucket.size() + object.size() + 1);
  key.append(bucket).push_back('/');
  key.append(object);
  // One pass: the best placeable slot, and the best attached one should none be placeable.
  size_t best = used, any = used;
  uint64_t best_score = 0, any_score = 0;
  for (size_t i = 0; i < used; ++i) {
    const State s = state(i);
    if (s == State::kDetached) continue;
    uint64_t score = XXH64(key.data(), key.size(), slots_[i].seed);
    if (any == used || score > any_score) {
      any = i;
      any_score = score;
    }
    if (s == State::kEnabled && (best == used || score > best_score)) {
      best = i;
      best_score = score;
    }
  }
  return best != used ? best : (any != used ? any : 0);
}

size_t Mountpaths::ForChunk(std::string_view upload_id, uint32_t chunk_num) const {
  const size_t used = size();
  const size_t n = std::max<size_t>(num_placeable(), 1);
  const uint64_t start = XXH64(upload_id.data(), upload_id.size(), 0);
  size_t k = static_cast<size_t>((start + chunk_num) % n);  // the k-th placeable slot
  for (size_t i = 0; i < used; ++i) {
    if (placeable(i) && k-- == 0) return i;
  }
  for (size_t i = 0; i < used; ++i) {  // none placeable (or a change raced this call)
    if (enabled(i)) return i;
  }
  return 0;
}

std::vector<size_t> Mountpaths::MirrorSlots(std::string_view bucket, std::string_view object, size_t primary,
                                            size_t copies) const {
  std::vector<size_t> out;
  if (copies < 2) return out;
  for (size_t mp : Ranked(bucket, object)) {
    if (out.size() + 1 >= copies) break;
    if (mp != primary && placeable(mp)) out.push_back(mp);
  }
  return out;
}

std::string Mountpaths::BucketDir(size_t mp, std::string_view bucket) const {
  // bck.h: an ais bucket's key is its name; any other's ("aws/<name>", "ais/@#ns/<name>") is a path.
  return slots_[mp].path + (bucket.find('/') != std::string_view::npos ? "/" : "/ais/") + std::string(bucket);
}

std::string Mountpaths::ObjectsDir(size_t mp, std::string_view bucket) const {
  return BucketDir(mp, bucket) + "/%ob";
}

std::string Mountpaths::ObjectPath(size_t mp, std::string_view bucket, std::string_view object) const {
  return ObjectsDir(mp, bucket) + "/" + ObjectRelPath(object);
}

std::string Mountpaths::MirrorDir(size_t mp, std::string_view bucket) const {
  return BucketDir(mp, bucket) + "/%mi";
}

std::string Mountpaths::MirrorPath(size_t mp, std::string_view bucket, std::string_view object) const {
  return MirrorDir(mp, bucket) + "/" + ObjectRelPath(object);
}

std::string Mountpaths::ChunkDir(size_t mp, std::string_view bucket, std::string_view upload_id) const {
  return BucketDir(mp, bucket) + "/%ch/" + std::string(upload_id);
}

std::string Mountpaths::ChunkPath(size_t mp, std::string_view bucket, std::string_view upload_id,
                                  uint32_t num) const {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "/%04u", num);
  return ChunkDir(mp, bucket, upload_id) + buf;
}

std::string Mountpaths::WorkDir(size_t mp) const { return slots_[mp].path + "/.ais.work"; }

std::string Mountpaths::BmdPath(size_t mp) const { return slots_[mp].path + "/.ais.bmd.json"; }

std::string Mountpaths::HeaderSnapshotPath(size_t mp) const { return slots_[mp].path + "/.ais.headers"; }

}  // namespace ais
