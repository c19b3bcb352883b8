// ListObjects (V1 and V2) parameters and the grouping of a bucket's names into a page of keys
// and CommonPrefixes, over the store's ordered listing (Store::List): no walker of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_meta.h"
#include "util/status.h"

namespace ais::s3 {

inline constexpr uint64_t kDefaultMaxKeys = 1000;

struct ListParams {
  bool v2 = false;  // list-type=2
  std::string prefix;
  std::string delimiter;
  uint64_t max_keys = kDefaultMaxKeys;
  std::string continuation_token;  // V2, as given
  std::string start_after;         // V2
  std::string marker;              // V1
  bool fetch_owner = false;
  bool url_encoding = false;  // encoding-type=url
  // Where the page starts: strictly after this name (a continuation token's, else start-after or
  // the marker).
  std::string after;
};

// `query(name)`: the request's query parameter, nullopt when absent. max-keys above `max_page`
// is clamped to it, and absent is `max_page` (S3 answers at most 1000 per page; this server up
// to its list page size, at least 1000).
// kInvalidArgument names a malformed parameter.
Result<ListParams> ParseListParams(const std::function<std::optional<std::string>(std::string_view)>& query,
                                   uint64_t max_page);

// V2 continuation tokens: opaque to clients, the name a page ended at, base64url.
std::string EncodeContinuationToken(std::string_view last);
Result<std::string> DecodeContinuationToken(std::string_view token);

struct ListedPage {
  std::vector<ObjectMeta> objects;
  std::vector<std::string> prefixes;  // CommonPrefixes, each ending with the delimiter
  bool truncated = false;
  std::string last;  // the greatest key or prefix in the page (the next page starts after it)
};

// Names strictly after `after`, in order, at most `limit`, all starting with the listing's
// prefix (the store's Store::List).
using NameFetch = std::function<Result<std::vector<ObjectMeta>>(const std::string& after, size_t limit)>;

// GroupPage: one page of at most `max_keys` keys and common prefixes together: each name under `prefix`
// that has `delimiter` after the prefix rolls up into the common prefix ending there (listed
// once, and never again once `after` is past it). `truncated` is exact: the page stops only
// when one more entry exists.
Result<ListedPage> GroupPage(const std::string& prefix, const std::string& delimiter, const std::string& after,
                            uint64_t max_keys, const NameFetch& fetch);

}  // namespace ais::s3
