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

// j[key] as text: a string as it is, an integer in decimal; "" when absent or of another type
// (the providers' JSON documents send some numbers as strings, some not).
inline std::string JsonFieldText(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned()) return std::to_string(it->get<uint64_t>());
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return {};
}

}  // namespace ais
