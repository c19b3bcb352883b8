// String helpers shared by the API and the store: IEC sizes, hex, splitting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais {

// "64MiB", "1GiB", "1KB" (AIS treats KB as KiB), "12345" -> bytes; nullopt if malformed.
std::optional<uint64_t> ParseIecSize(std::string_view s);
// Exact IEC string when divisible ("64MiB"), else plain bytes ("1000B").
std::string FormatIecSize(uint64_t n);
std::optional<uint64_t> ParseUint(std::string_view s);
std::vector<std::string_view> Split(std::string_view s, char sep);
bool IEquals(std::string_view a, std::string_view b);
std::string AsciiLower(std::string_view s);  // A-Z to a-z, every other byte as it is
std::string RandomId(size_t len = 10);  // [a-zA-Z0-9], for job/upload/listing ids
// [a-zA-Z0-9] from the OS's cryptographic generator (OpenSSL RAND_bytes): for secrets, which
// RandomId's fast generator must not make (its state shows through the ids it hands out).
// kIOError when the generator has no entropy to give.
Result<std::string> RandomSecret(size_t len);

}  // namespace ais

namespace ais {
// RFC 3986 percent-decoding; nullopt on a malformed escape. Query strings also map '+' to ' '.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_as_space);
// Percent-encoding: every byte but A-Z a-z 0-9 and those in `keep` as %XX (upper-case hex).
std::string PercentEncode(std::string_view s, std::string_view keep);
// v in base 36, lower-case digits (the synthetic ETag's time part, as AIS writes it).
std::string Base36(uint64_t v);

}  // namespace ais
