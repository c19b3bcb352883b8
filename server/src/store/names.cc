#include "store/names.h"

#include "util/strings.h"

namespace ais {
namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

Status BadName(std::string_view name, std::string_view why) {
  return Status::InvalidArgument("invalid object name \"" + std::string(name) + "\": " + std::string(why));
}

// Rules shared by object names and prefixes; `name` has no trailing '/' here unless allowed.
Status ValidateComponents(std::string_view full, std::string_view body) {
  if (full.size() > kMaxObjectNameLen) return BadName(full.substr(0, 64), "name too long");
  if (body.starts_with("/")) return BadName(full, "must not start with '/'");
  if (full.starts_with("~/")) return BadName(full, "must not start with '~/'");  // "~/" itself included
  for (unsigned char c : full) {
    if (IsControl(c)) return BadName(full, "control characters are not allowed");
  }
  for (auto comp : Split(body, '/')) {
    if (comp == "." || comp == "..") return BadName(full, "'.' and '..' path components are not allowed");
    if (comp.empty()) return BadName(full, "empty path component ('//')");
    if (comp.size() > kMaxNameComponentLen) return BadName(full.substr(0, 64), "path component too long");
  }
  return Status::OK();
}

}  // namespace

Status ValidateBucketName(std::string_view name) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bucket name \"" + std::string(name) + "\" is invalid: " + std::string(why));
  };
  if (name.empty()) return bad("may not be empty");
  if (name.size() > kMaxBucketNameLen) return bad("may not exceed 64 characters");
  if (name.front() == '.') return bad("a leading '.' is reserved for system buckets");
  if (name.find("..") != std::string_view::npos) return bad("may not contain '..'");
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok) return bad("may only contain letters, numbers, dashes (-), underscores (_), and dots (.)");
  }
  return Status::OK();
}

Result<BucketNs> ParseNamespace(std::string_view uname) {
  if (uname.empty() || uname == "@#") return BucketNs{};
  std::string_view rest = uname.front() == '@' ? uname.substr(1) : uname;
  BucketNs ns;
  auto hash = rest.find('#');
  ns.uuid = std::string(rest.substr(0, hash));
  if (hash != std::string_view::npos) ns.name = std::string(rest.substr(hash + 1));
  if (uname.front() != '@' && uname.front() != '#') {
    return Status::InvalidArgument("invalid namespace \"" + std::string(uname.substr(0, 80)) +
                                   "\" (expecting @uuid#name or #name)");
  }
  AIS_RETURN_IF_ERROR(ValidateNamespace(ns));
  return ns;
}

Status ValidateNamespace(const BucketNs& ns) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bucket namespace (uuid: \"" + ns.uuid.substr(0, 64) + "\", name: \"" +
                                   ns.name.substr(0, 80) + "\") " + std::string(why));
  };
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (ns.uuid != "@") {  // "@": any remote cluster
    if (ns.uuid.size() > 32) return bad("is invalid: uuid may not exceed 32 characters");
    for (size_t i = 0; i < ns.uuid.size(); ++i) {
      const char c = ns.uuid[i];
      const bool inner = i > 0 && i + 1 < ns.uuid.size() && (c == '-' || c == '_');
      if (!alnum(c) && !inner) return bad("is invalid: uuid may only contain letters, numbers and inner '-' or '_'");
    }
  }
  if (ns.name.size() > kMaxBucketNameLen) return bad("is invalid: name may not exceed 64 characters");
  if (ns.name.find("..") != std::string::npos) return bad("is invalid: name may not contain '..'");
  for (char c : ns.name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') {
      return bad("is invalid: name may only contain letters, numbers, dashes (-), underscores (_), and dots (.)");
    }
  }
  return Status::OK();
}

Status ValidateObjectName(std::string_view name, bool allow_trailing_slash) {
  if (name.empty()) return Status::InvalidArgument("object name is empty");
  std::string_view body = name;
  if (body.ends_with('/')) {
    if (!allow_trailing_slash) return BadName(name, "must not end with '/'");
    body.remove_suffix(1);
    if (body.empty()) return BadName(name, "must not be '/'");
  }
  return ValidateComponents(name, body);
}

Status ValidatePrefix(std::string_view prefix) {
  if (prefix.empty()) return Status::OK();
  std::string_view body = prefix;
  if (body.ends_with('/')) body.remove_suffix(1);
  if (body.empty()) return BadName(prefix, "must not be '/'");
  return ValidateComponents(prefix, body);
}

std::string ObjectRelPath(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 8);
  for (char c : name) {
    if (c == '/') out.push_back(kDirSuffix);
    out.push_back(c);
  }
  return out;
}

std::string PrefixRelDir(std::string_view prefix) {
  auto pos = prefix.rfind('/');
  if (pos == std::string_view::npos) return "";
  return ObjectRelPath(prefix.substr(0, pos)) + kDirSuffix;
}

}  // namespace ais
