#include "api/features.h"

#include "util/strings.h"

namespace ais {

Result<uint64_t> ParseClusterFeatures(std::string_view text) {
  if (auto n = ParseUint(text)) return *n;
  uint64_t bits = 0;
  std::string norm(text);
  for (char& c : norm) {
    if (c == ' ' || c == '\t') c = ',';
  }
  for (std::string_view name : Split(norm, ',')) {
    if (name.empty() || IEquals(name, "none")) continue;
    bool found = false;
    for (size_t i = 0; i < kClusterFeatures.size(); ++i) {
      if (IEquals(name, kClusterFeatures[i])) {
        bits |= uint64_t{1} << i;
        found = true;
      }
    }
    if (!found) return Status::InvalidArgument("unknown feature \"" + std::string(name.substr(0, 64)) + "\"");
  }
  return bits;
}

}  // namespace ais
