// JSON text of a document that may hold client-supplied strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ais {

// Object names, bucket names and messages come from clients and need not be valid UTF-8; as Go's
// encoder does, invalid bytes become U+FFFD instead of failing the reply (nlohmann throws).
inline std::string JsonText(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ais
