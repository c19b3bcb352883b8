#include "api/route.h"

#include "util/strings.h"

namespace ais {

Result<Route> ParseRoute(std::string_view path) {
  if (!path.starts_with("/v1/") && path != "/v1") {
    return Status::NotFound("invalid URL path \"" + std::string(path) + "\"");
  }
  std::string_view rest = path.size() > 4 ? path.substr(4) : std::string_view{};
  Route route;
  auto slash = rest.find('/');
  route.area = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) {
    std::string_view after = rest.substr(slash + 1);
    auto s2 = after.find('/');
    auto bucket = PercentDecode(after.substr(0, s2), false);
    std::optional<std::string> object = std::string();
    if (s2 != std::string_view::npos) {
      object = PercentDecode(after.substr(s2 + 1), false);
      route.has_extra = !after.substr(s2 + 1).empty();
    }
    if (!bucket || !object) return Status::InvalidArgument("malformed percent-encoding in URL path");
    route.bucket = std::move(*bucket);
    route.object = std::move(*object);
  }
  return route;
}

}  // namespace ais
