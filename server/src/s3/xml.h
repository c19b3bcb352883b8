// The S3 XML documents, written and read with pugixml: replies are built as documents and
// serialized (never pasted together as text); request bodies are parsed by pugixml and read
// element by element, each bounded by the caller's body limit. A malformed body is
// kInvalidArgument (the S3 front end replies MalformedXML), never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <pugixml.hpp>

#include "util/status.h"

namespace ais::s3 {

// The namespace AWS puts on every result document (minio's client looks elements up in it).
inline constexpr const char* kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// A reply document: `<?xml ...?>` and the root element (with xmlns unless `ns` is false).
class XmlDoc {
 public:
  explicit XmlDoc(const char* root, bool ns = true);
  pugi::xml_node root() const { return root_; }
  std::string Text() const;

 private:
  pugi::xml_document doc_;
  pugi::xml_node root_;
};

// <name>text</name> under `parent`; returns the new element.
pugi::xml_node AddText(pugi::xml_node parent, const char* name, std::string_view text);

// "2006-01-02T15:04:05.000Z" (the layout S3 lists times in).
std::string Iso8601(int64_t unix_ns);

// ---- ListObjects (V1 and V2: ListBucketResult) ----
struct ListedObject {
  std::string key;
  int64_t last_modified_ns = 0;
  std::string etag;  // quoted, or empty
  uint64_t size = 0;
};

struct ListResult {
  bool v2 = true;
  bool url_encoding = false;  // encoding-type=url: keys, prefixes, delimiter, markers URL-encoded
  bool fetch_owner = false;   // V2: Owner on each entry only when asked (V1: always)
  std::string bucket;
  std::string prefix;
  std::string delimiter;
  uint64_t max_keys = 1000;
  bool truncated = false;
  std::string continuation_token;       // V2, as received
  std::string next_continuation_token;  // V2, when truncated
  std::string start_after;              // V2, as received
  std::string marker;                   // V1, as received
  std::string next_marker;              // V1, when truncated (and a delimiter is given)
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
};
std::string ListResultXml(const ListResult& r);

// S3's encoding-type=url: every byte but unreserved ones and '/' percent-encoded.
std::string UrlEncodeKey(std::string_view key);

// ---- request bodies ----
struct DeleteRequest {
  std::vector<std::string> keys;
  bool quiet = false;
};
inline constexpr size_t kMaxDeleteKeys = 1000;  // S3's limit per DeleteObjects
Result<DeleteRequest> ParseDeleteRequest(std::string_view body);

struct CompletedPart {
  uint32_t number = 0;
  std::string etag;  // without quotes
};
// CompleteMultipartUpload: the parts as listed (order and duplicates are the caller's to check).
Result<std::vector<CompletedPart>> ParseCompleteRequest(std::string_view body, size_t max_parts);

// VersioningConfiguration: Status "Enabled" or "Suspended".
Result<std::string> ParseVersioningRequest(std::string_view body);

}  // namespace ais::s3
