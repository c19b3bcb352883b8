// Base64 (RFC 4648) by OpenSSL's EVP block coder.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ais {

// Standard or URL-safe alphabet, padding optional. nullopt when malformed.
std::optional<std::string> DecodeBase64(std::string_view in);
// Standard alphabet with padding.
std::string EncodeBase64(std::string_view in);

}  // namespace ais
