// How a stored object looks through S3: its ETag, Last-Modified, user metadata and conditional
// headers. The AIS API sees the same object: S3 user metadata is its custom metadata
// (x-amz-meta-color: red <-> "color": "red"), and the few keys the S3 front end keeps for itself
// are custom metadata too (ETag, Content-Type, x-amz-checksum-<algo>), never echoed as user metadata.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/exchange.h"
#include "store/object_meta.h"
#include "util/status.h"

namespace ais::s3 {

using CustomMd = std::vector<std::pair<std::string, std::string>>;

// Custom metadata keys of the S3 front end.
inline constexpr std::string_view kEtagKey = "ETag";  // also a remote object's (the backend's ETag)
inline constexpr std::string_view kContentTypeKey = "Content-Type";
inline constexpr std::string_view kChecksumKeyPrefix = "x-amz-checksum-";  // + algo: the value in hex
// The front end's own values are stored without ',' and '=' (hex; Content-Type with those
// percent-encoded): the AIS API lists custom metadata as "k=v, k2=v2" in one header.
std::string StoredChecksum(std::string_view base64);
std::string StoredContentType(std::string_view content_type);
std::string ContentTypeOf(const ObjectMeta& m);  // the stored one, else application/octet-stream
inline constexpr size_t kMaxUserMetadata = 2048;  // S3's limit on x-amz-meta-* (names and values)

// The ETag S3 shows, unquoted: the one stored with the object (MD5 at PUT, "<md5>-N" for
// multipart, the backend's for a remote object), else the MD5 of a monolithic object in an md5
// bucket, else a synthetic "v1-<checksum>-<mtime base36>" (no syscall: listings use it too).
std::string EtagOf(const ObjectMeta& m);
std::string QuotedEtag(const ObjectMeta& m);

// GET/HEAD reply headers: ETag, Last-Modified, Content-Type, Accept-Ranges, x-amz-meta-*,
// x-amz-version-id (a remote versioned object's) and, with `checksum_mode` on a whole object, the
// x-amz-checksum-<algo> given at PUT.
HeaderList ObjectHeaders(const ObjectMeta& m, bool checksum_mode);

// The request's x-amz-meta-* (names lower-cased, the prefix dropped) and Content-Type, as custom
// metadata. kInvalidArgument when they exceed kMaxUserMetadata or a name is not a header token.
Result<CustomMd> UserMetadata(const Exchange& ex);

enum class Condition { kPass, kNotModified, kFailed };
// RFC 7232 as S3 applies it: If-Match / If-Unmodified-Since fail (412); If-None-Match /
// If-Modified-Since say not modified (304 for GET/HEAD). `copy_source`: the x-amz-copy-source-if-*
// forms, where "not modified" is a 412 too.
Condition CheckConditions(const Exchange& ex, const ObjectMeta& m, bool copy_source = false);

// "Sun, 06 Nov 1994 08:49:37 GMT" -> unix seconds; nullopt if malformed.
std::optional<int64_t> ParseHttpDate(std::string_view s);

// An ETag list from If-Match / If-None-Match ("*" matches any): whether `etag` (unquoted) is in it.
bool EtagListMatches(std::string_view list, std::string_view etag);

}  // namespace ais::s3
