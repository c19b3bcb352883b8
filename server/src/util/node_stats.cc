#include "util/node_stats.h"

namespace ais {

NodeStats& ServerStats() {
  static NodeStats stats;
  return stats;
}

}  // namespace ais
