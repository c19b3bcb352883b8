#include "archive/member_select.h"

#include <vector>

#include "archive/archive_writer.h"

namespace ais {

Result<MemberSelect> MemberSelect::Make(std::string_view mode, std::string pattern) {
  MemberSelect s;
  s.pattern_ = std::move(pattern);
  if (mode.empty() || mode == "*" || mode == "prefix") {
    s.mode_ = Mode::kPrefix;
  } else if (mode == "regexp") {
    s.mode_ = Mode::kRegexp;
    try {
      s.re_.emplace(s.pattern_, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("invalid archregx \"" + s.pattern_ + "\": " + e.what());
    }
  } else if (mode == "suffix") {
    s.mode_ = Mode::kSuffix;
  } else if (mode == "substr") {
    s.mode_ = Mode::kSubstr;
  } else if (mode == "wdskey") {
    s.mode_ = Mode::kWdsKey;
  } else {
    return Status::InvalidArgument("invalid archmode \"" + std::string(mode) +
                                   "\" (expecting regexp, prefix, suffix, substr or wdskey)");
  }
  return s;
}

std::string MemberSelect::WdsKey(std::string_view name) {
  size_t slash = name.rfind('/');
  size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash)) name = name.substr(0, dot);
  if (name.starts_with('/')) name.remove_prefix(1);
  return std::string(name);
}

bool MemberSelect::Matches(std::string_view name) const {
  if (pattern_.empty()) return true;
  switch (mode_) {
    case Mode::kRegexp: return std::regex_search(name.begin(), name.end(), *re_);
    case Mode::kPrefix: return name.starts_with(pattern_);
    case Mode::kSuffix: return name.ends_with(pattern_);
    case Mode::kSubstr: return name.find(pattern_) != std::string_view::npos;
    case Mode::kWdsKey: return WdsKey(name) == pattern_;
  }
  return false;
}

Status MemberSelect::WriteTar(Shard& shard, OutputSink* sink, const std::string& what) const {
  std::vector<Shard::Member> picked;
  AIS_RETURN_IF_ERROR(shard.ForEach([&](const Shard::Member& m) {
    if (Matches(m.name)) picked.push_back(m);
    return Status::OK();
  }));
  if (picked.empty()) return Status::NotFound("no files in " + what + " match \"" + pattern_ + "\"");
  auto w = ArchiveWriter::Create(ArchiveFormat::kTar, sink);
  if (!w.ok()) return w.status();
  for (const auto& m : picked) {
    AIS_RETURN_IF_ERROR((*w)->BeginEntry(m.name, m.size, 0));
    if (m.offset) {
      AIS_RETURN_IF_ERROR((*w)->WriteFile(shard.object()->Segments(*m.offset, m.size), shard.object()));
    } else {
      AIS_RETURN_IF_ERROR(shard.Read(m.name, 0, m.size, [&](const char* d, size_t n) { return (*w)->Write(d, n); }));
    }
    AIS_RETURN_IF_ERROR((*w)->EndEntry());
  }
  return (*w)->Finish();
}

}  // namespace ais
