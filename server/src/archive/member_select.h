// MemberSelect: the multi-file read of GET ?archregx=&archmode= (getbatch.md §7): the regular
// files of a shard whose names match, as a plain tar under their own names.
//
// Modes: `regexp` (ECMAScript, matches anywhere in the name), `prefix`, `suffix`, `substr`, and
// `wdskey` (the WebDataset key - the name without its last extension and leading '/' - equals the
// pattern). "" and "*" mean `prefix`; an empty pattern matches every file.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "archive/output_sink.h"
#include "archive/shard.h"
#include "util/status.h"

namespace ais {

class MemberSelect {
 public:
  enum class Mode { kRegexp, kPrefix, kSuffix, kSubstr, kWdsKey };

  // kInvalidArgument for an unknown mode or a bad regular expression.
  static Result<MemberSelect> Make(std::string_view mode, std::string pattern);

  bool Matches(std::string_view name) const;
  // Writes the matching files of `shard` into `sink` as a tar archive; kNotFound (nothing
  // written) when none matches. `what` names the shard in that message.
  Status WriteTar(Shard& shard, OutputSink* sink, const std::string& what) const;

  static std::string WdsKey(std::string_view name);

 private:
  Mode mode_ = Mode::kPrefix;
  std::string pattern_;
  std::optional<std::regex> re_;
};

}  // namespace ais
