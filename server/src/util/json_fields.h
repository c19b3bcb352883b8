// Typed, validating decoding of JSON request bodies.
//
// ParseJson bounds what a body may be (size is bounded by the reader; nesting depth here).
// JsonFields reads one JSON object into a typed struct the way Go's encoding/json decodes into
// an AIS struct, so real AIS clients work unchanged:
//   - keys match case-insensitively (an exact match wins), as Go matches struct fields;
//   - an absent key or a JSON null leaves the target as it was ("not given");
// and stricter than Go, because a value that does not fit is a client bug to report, not to guess
// around: a wrong type, a number out of range, an over-long string or an unknown key is a
// kInvalidArgument naming the field by its path ("value.bck.name").
//
//   QueryMsg q;
//   JsonFields f(body, "");
//   f.Str("id", &q.id).Str("kind", &q.kind).OptBool("show_active", &q.show_active)
//    .Object("bck", [&](JsonFields& b) { b.Str("name", &q.bucket).Ignore("provider"); });
//   AIS_RETURN_IF_ERROR(f.Finish());
//
// Every reader is a no-op after the first error, so a chain needs one check, at Finish(), which
// also reports the first key that no reader asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais {

struct JsonLimits {
  size_t max_body = 4 << 20;         // bytes of one JSON request body
  size_t max_depth = 32;             // nesting of objects and arrays
  size_t max_string = 64 << 10;      // bytes in one string value (names, templates, prefixes)
  size_t max_array = 1 << 20;        // items in one array field
};

// The process-wide limits, set once at startup (main) before the server serves.
JsonLimits& DefaultJsonLimits();

// Parses `text` as one JSON value, refusing malformed JSON and nesting deeper than the limit.
// An empty text is an empty object (an AIS request with no body).
Result<nlohmann::json> ParseJson(std::string_view text, const JsonLimits& limits = DefaultJsonLimits());

class JsonFields {
 public:
  // Reads the object `j`. `path` names it in errors; "" is the request body itself, which must
  // be an object, while a field's null reads as an empty object. REQUIRES: `j` outlives this
  // (never a temporary).
  JsonFields(const nlohmann::json& j, std::string path, const JsonLimits& limits = DefaultJsonLimits());
  JsonFields(nlohmann::json&& j, std::string path, const JsonLimits& limits = DefaultJsonLimits()) = delete;

  JsonFields& Str(std::string_view key, std::string* out);
  JsonFields& Bool(std::string_view key, bool* out);
  JsonFields& OptBool(std::string_view key, std::optional<bool>* out);
  // An integer in [min, max] (a number with a fraction or exponent is refused, as Go refuses it).
  JsonFields& Int(std::string_view key, int64_t* out, int64_t min = std::numeric_limits<int64_t>::min(),
                  int64_t max = std::numeric_limits<int64_t>::max());
  JsonFields& Uint(std::string_view key, uint64_t* out, uint64_t max = std::numeric_limits<uint64_t>::max());
  // A size: a non-negative integer or an IEC string ("8MiB", "1GB", "4096").
  JsonFields& Size(std::string_view key, uint64_t* out);
  JsonFields& Size(std::string_view key, std::optional<uint64_t>* out);  // stays nullopt when not given
  JsonFields& StrList(std::string_view key, std::vector<std::string>* out);
  // {"k": "v", ...}
  JsonFields& StrMap(std::string_view key, std::vector<std::pair<std::string, std::string>>* out);
  // A nested object, read by `read` with the path extended.
  JsonFields& Object(std::string_view key, const std::function<void(JsonFields&)>& read);
  // Any JSON value (decoded by the caller later); *out stays null when absent or null.
  JsonFields& Raw(std::string_view key, const nlohmann::json** out);
  // Fields of the AIS message that this server has no use for: accepted when of their AIS type
  // (kAny: whatever it is), and not read.
  enum class Kind { kString, kBool, kInt, kObject, kArray, kAny };
  JsonFields& Unused(Kind kind, std::initializer_list<std::string_view> keys);

  // Records a caller's own validation failure of `key` (first error wins).
  JsonFields& Fail(std::string_view key, const std::string& why);
  bool ok() const { return status_.ok(); }
  // The first error; else the first key no reader asked for; else OK.
  Status Finish();

  // "value.bck.name" for key "name" of this object.
  std::string PathOf(std::string_view key) const;

 private:
  // The value of `key` if present and not null (marks it consumed), else nullptr.
  const nlohmann::json* Find(std::string_view key);
  JsonFields& SizeOf(std::string_view key, const nlohmann::json& v, uint64_t* out);
  JsonFields& TypeError(std::string_view key, const nlohmann::json& v, std::string_view expected);

  const nlohmann::json* obj_;  // null: an absent or null object, read as empty
  std::string path_;
  const JsonLimits& limits_;
  std::vector<bool> used_;  // by position in obj_'s iteration order
  Status status_;
};

// The JSON type name of `v` as an error message says it ("string", "number", "null", ...).
std::string_view JsonTypeName(const nlohmann::json& v);

}  // namespace ais
