#include "store/relocation_log.h"

namespace ais {

RelocationLog::Move::Move(RelocationLog& log, std::string bucket, std::string name)
    : log_(log), key_(std::move(bucket), std::move(name)) {
  std::lock_guard lock(log_.mu_);
  log_.done_[key_] = kMoving;
  log_.size_.store(log_.done_.size(), std::memory_order_release);
}

RelocationLog::Move::~Move() {
  std::lock_guard lock(log_.mu_);
  const uint64_t seq = ++log_.seq_;
  log_.done_[key_] = seq;
  log_.ended_.emplace_back(seq, key_);
  log_.PruneLocked();
}

RelocationLog::Walk::Walk(RelocationLog& log, std::string bucket) : log_(log), bucket_(std::move(bucket)) {
  std::lock_guard lock(log_.mu_);
  since_ = log_.seq_;
  log_.walks_.insert(since_);
}

RelocationLog::Walk::~Walk() {
  std::lock_guard lock(log_.mu_);
  log_.walks_.erase(log_.walks_.find(since_));
  log_.PruneLocked();
}

std::vector<std::string> RelocationLog::Walk::MovedBetween(const std::string& lo, const std::string* hi) const {
  std::vector<std::string> out;
  if (log_.size_.load(std::memory_order_acquire) == 0) return out;
  std::lock_guard lock(log_.mu_);
  for (auto it = log_.done_.upper_bound({bucket_, lo}); it != log_.done_.end() && it->first.first == bucket_; ++it) {
    if (hi != nullptr && it->first.second >= *hi) break;
    if (it->second > since_) out.push_back(it->first.second);
  }
  return out;
}

void RelocationLog::PruneLocked() {
  // A move that ended before every running walk began is in their directories already.
  const uint64_t oldest = walks_.empty() ? seq_ : *walks_.begin();
  while (!ended_.empty() && ended_.front().first <= oldest) {
    auto it = done_.find(ended_.front().second);
    if (it != done_.end() && it->second == ended_.front().first) done_.erase(it);  // not moving again since
    ended_.pop_front();
  }
  size_.store(done_.size(), std::memory_order_release);
}

}  // namespace ais
