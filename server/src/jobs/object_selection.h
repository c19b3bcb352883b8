// ObjectSelection: which objects a multi-object operation names (AIS apc.ListRange): a list of
// names, a range template ("shard-{0000..0999}.tar", "a-@99"), or a prefix ("" = the whole
// bucket). Templates follow AIS cmn/cos/template.go.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "util/status.h"

namespace ais {

// A parsed range template: prefix, then per range the number (zero-padded to `digits`) and the
// text up to the next range.
struct NameTemplate {
  struct Range {
    int64_t start = 0;
    int64_t end = 0;
    int64_t step = 1;
    int digits = 0;
    std::string gap;
  };
  std::string prefix;
  std::vector<Range> ranges;  // empty: a prefix, not a range

  // Bash style "{a..b[..step]}" (several allowed) or at style "@N" (0..N, padded to N's width).
  // A template with neither is a prefix. "%d" (fmt) style is refused: it names ~2^63 objects.
  static Result<NameTemplate> Parse(std::string_view tmpl);
  uint64_t Count() const;
  // Every name in order; stops early when fn returns false.
  void Expand(const std::function<bool(const std::string&)>& fn) const;
};

class ObjectSelection {
 public:
  enum class Kind { kList, kRange, kPrefix };

  // A non-empty list of names, or else a template ("" or "*" = the whole bucket); not both.
  static Result<ObjectSelection> From(std::string tmpl, std::vector<std::string> names);
  // From a ListRange value {"objnames": [...]} or {"template": "..."}; nothing else.
  static Result<ObjectSelection> FromJson(const nlohmann::json& value);

  Kind kind() const { return kind_; }
  const std::vector<std::string>& names() const { return names_; }
  const NameTemplate& tmpl() const { return tmpl_; }
  // "objnames:[a b ...]" / "template:..." / "prefix:..." for logs and snapshots.
  std::string Describe() const;

  // Calls fn(name, exists_known) for each selected name in order: list names as given, range
  // names as expanded (whether or not they exist), prefix matches from the bucket itself
  // (existing objects only). Stops at the first error fn returns, or once `stop()` is true.
  Status ForEach(Store& store, const std::string& bucket, const std::function<bool()>& stop,
                 const std::function<Status(const std::string& name)>& fn) const;

 private:
  Kind kind_ = Kind::kPrefix;
  std::vector<std::string> names_;
  NameTemplate tmpl_;
};

}  // namespace ais
