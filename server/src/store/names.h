// Bucket and object name rules (AIS cmn/cos _validatePath, CheckAlphaPlus) and their on-disk form.
// This is the only place an object name becomes a relative file path.
#pragma once

#include <string>
#include <string_view>

#include "store/bck.h"
#include "util/status.h"

namespace ais {

inline constexpr size_t kMaxBucketNameLen = 64;
inline constexpr size_t kMaxObjectNameLen = 1024;
inline constexpr size_t kMaxNameComponentLen = 254;  // one byte is reserved for kDirSuffix
// Directories on disk carry this suffix so that objects "a" and "a/b" can coexist:
// "a" is the file `a`, "a/b" is `a\x01/b`. Control bytes never occur in valid names.
inline constexpr char kDirSuffix = '\x01';

Status ValidateBucketName(std::string_view name);
// A namespace as a query or uname carries it (Ns.Uname, cmn.ParseNsUname): "" or "@#" the global
// one, "@#name" (or "#name") a local one, "@uuid#name" / "@uuid" a remote cluster's ("@@#": any
// remote cluster, uuid "@"); each part checked as AIS checks it.
Result<BucketNs> ParseNamespace(std::string_view uname);
// A namespace's parts, as cmn.Ns.Validate checks them.
Status ValidateNamespace(const BucketNs& ns);
// allow_trailing_slash: HEAD may probe virtual directories.
Status ValidateObjectName(std::string_view name, bool allow_trailing_slash = false);
// A list prefix: may be empty and may end with '/', otherwise the object rules apply.
Status ValidatePrefix(std::string_view prefix);

// REQUIRES: ValidateObjectName(name).ok(). "a/b/c" -> "a\x01/b\x01/c".
std::string ObjectRelPath(std::string_view name);
// The directory (relative, encoded) holding every object whose name starts with prefix:
// "train/x" -> "train\x01", "x" -> "".
std::string PrefixRelDir(std::string_view prefix);

}  // namespace ais
