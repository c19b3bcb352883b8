#include "store/access_times.h"

#include <xxhash.h>

#include <algorithm>
#include <vector>

namespace ais {

AccessTimes::AccessTimes(size_t max_entries) : max_per_shard_(std::max<size_t>(2, max_entries / kShards)) {}

uint64_t AccessTimes::KeyOf(std::string_view bucket, std::string_view name) {
  return XXH3_64bits_withSeed(name.data(), name.size(), XXH3_64bits(bucket.data(), bucket.size()));
}

void AccessTimes::Touch(std::string_view bucket, std::string_view name, int64_t now_ns) {
  const uint64_t key = KeyOf(bucket, name);
  Shard& s = ShardOf(key);
  std::lock_guard lock(s.mu);
  auto [it, added] = s.last.try_emplace(key, now_ns);
  if (!added) {
    it->second = std::max(it->second, now_ns);
    return;
  }
  if (s.last.size() > max_per_shard_) DropOlderHalf(s);
}

int64_t AccessTimes::Get(std::string_view bucket, std::string_view name) const {
  const uint64_t key = KeyOf(bucket, name);
  const Shard& s = ShardOf(key);
  std::lock_guard lock(s.mu);
  auto it = s.last.find(key);
  return it == s.last.end() ? 0 : it->second;
}

void AccessTimes::Forget(std::string_view bucket, std::string_view name) {
  const uint64_t key = KeyOf(bucket, name);
  Shard& s = ShardOf(key);
  std::lock_guard lock(s.mu);
  s.last.erase(key);
}

size_t AccessTimes::size() const {
  size_t n = 0;
  for (const auto& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.last.size();
  }
  return n;
}

void AccessTimes::DropOlderHalf(Shard& s) {
  std::vector<int64_t> times;
  times.reserve(s.last.size());
  for (const auto& [key, t] : s.last) times.push_back(t);
  auto mid = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), mid, times.end());
  const int64_t median = *mid;
  std::erase_if(s.last, [median](const auto& kv) { return kv.second < median; });
  // Half or more share the median time: they go too, so that the shard shrinks.
  if (s.last.size() > times.size() / 2 + 1) std::erase_if(s.last, [median](const auto& kv) { return kv.second <= median; });
}

}  // namespace ais
