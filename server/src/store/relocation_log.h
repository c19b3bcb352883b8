// RelocationLog: the objects whose files move from one mountpath to another while walks run.
//
// A walk (Store::ForEachObject) merges one sorted walker per mountpath, and each walker reads a
// directory when it gets to it, not all at once. An object whose files move from mountpath A to B
// in between - B's directory read before the file arrived, A's after it left - is seen by no
// walker. So every such move is logged (under the object's stripe lock: from before its first file
// moves until after its last one has), and a walk also visits the logged names that fall between
// two names its walkers gave it. An entry is kept while a walk that began before it ended runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ais {

class RelocationLog {
 public:
  RelocationLog() = default;
  RelocationLog(const RelocationLog&) = delete;
  RelocationLog& operator=(const RelocationLog&) = delete;

  // bucket/name is moving until the Move is destroyed.
  class Move {
   public:
    Move(RelocationLog& log, std::string bucket, std::string name);
    ~Move();
    Move(const Move&) = delete;
    Move& operator=(const Move&) = delete;

   private:
    RelocationLog& log_;
    std::pair<std::string, std::string> key_;
  };

  // A walk of one bucket, from construction to destruction.
  class Walk {
   public:
    Walk(RelocationLog& log, std::string bucket);
    ~Walk();
    Walk(const Walk&) = delete;
    Walk& operator=(const Walk&) = delete;
    // In order, the names with lo < name (and name < *hi unless hi is null) whose files moved
    // since the walk began or are moving now.
    std::vector<std::string> MovedBetween(const std::string& lo, const std::string* hi) const;

   private:
    RelocationLog& log_;
    const std::string bucket_;
    uint64_t since_;
  };

 private:
  static constexpr uint64_t kMoving = UINT64_MAX;  // the `done` of a move in progress
  void PruneLocked();

  std::mutex mu_;
  uint64_t seq_ = 0;                                          // guarded by mu_
  std::map<std::pair<std::string, std::string>, uint64_t> done_;  // (bucket, name) -> seq its move ended at
  std::deque<std::pair<uint64_t, std::pair<std::string, std::string>>> ended_;  // done_'s ends, oldest first
  std::multiset<uint64_t> walks_;  // the seq each running walk began at
  std::atomic<size_t> size_{0};    // done_.size(): a walk skips the lock while nothing moves
};

}  // namespace ais
