// NodeStats: this node's request counters, reported by GET ?what=node_status as AIS "tracker"
// stats (get.n, put.n, ...). Process-wide; lock-free.
#pragma once

#include <atomic>
#include <cstdint>

namespace ais {

struct NodeStats {
  std::atomic<int64_t> get_n{0};
  std::atomic<int64_t> put_n{0};
  std::atomic<int64_t> put_size{0};
  std::atomic<int64_t> head_n{0};
  std::atomic<int64_t> del_n{0};
  std::atomic<int64_t> lst_n{0};
};

NodeStats& ServerStats();

}  // namespace ais
