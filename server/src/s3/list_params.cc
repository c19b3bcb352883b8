#include "s3/list_params.h"

#include "util/base64.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

// Past every valid UTF-8 name that starts with what precedes it: no UTF-8 byte is 0xFF.
constexpr std::string_view kPastSubtree = "\xff\xff\xff\xff";

}  // namespace

Result<ListParams> ParseListParams(const std::function<std::optional<std::string>(std::string_view)>& query,
                                   uint64_t max_page) {
  ListParams p;
  const std::string list_type = query("list-type").value_or("");
  if (!list_type.empty() && list_type != "2" && list_type != "1") {
    return Status::InvalidArgument("invalid list-type \"" + list_type.substr(0, 16) + "\" (expecting 2)");
  }
  p.v2 = list_type == "2";
  p.prefix = query("prefix").value_or("");
  p.delimiter = query("delimiter").value_or("");
  // Without max-keys a page is as large as this server's list pages (S3 says "up to 1000"; every
  // client pages on IsTruncated): a page re-reads the directory it starts in, so fewer pages
  // list a large flat bucket several times faster.
  p.max_keys = std::max<uint64_t>(max_page, kDefaultMaxKeys);
  if (auto mk = query("max-keys"); mk && !mk->empty()) {
    auto n = ParseUint(*mk);
    if (!n || mk->size() > 12) return Status::InvalidArgument("invalid max-keys \"" + mk->substr(0, 16) + "\"");
    p.max_keys = std::min<uint64_t>(*n, std::max<uint64_t>(max_page, kDefaultMaxKeys));
  }
  if (auto enc = query("encoding-type"); enc && !enc->empty()) {
    if (*enc != "url") return Status::InvalidArgument("invalid encoding-type \"" + enc->substr(0, 16) + "\" (expecting url)");
    p.url_encoding = true;
  }
  if (p.v2) {
    p.continuation_token = query("continuation-token").value_or("");
    p.start_after = query("start-after").value_or("");
    p.fetch_owner = query("fetch-owner").value_or("") == "true";
    if (!p.continuation_token.empty()) {
      auto after = DecodeContinuationToken(p.continuation_token);
      if (!after.ok()) return after.status();
      p.after = std::move(*after);
    } else {
      p.after = p.start_after;
    }
  } else {
    p.marker = query("marker").value_or("");
    p.after = p.marker;
  }
  return p;
}

std::string EncodeContinuationToken(std::string_view last) {
  std::string t = EncodeBase64(last);
  for (char& c : t) {
    if (c == '+') c = '-';
    else if (c == '/') c = '_';
  }
  while (!t.empty() && t.back() == '=') t.pop_back();
  return t.empty() ? "-" : t;  // never empty: an empty token means "no token"
}

Result<std::string> DecodeContinuationToken(std::string_view token) {
  if (token == "-") return std::string();
  auto d = DecodeBase64(token);
  if (!d) return Status::InvalidArgument("the continuation token provided is incorrect");
  return *d;
}

Result<ListedPage> GroupPage(const std::string& prefix, const std::string& delimiter, const std::string& after,
                            uint64_t max_keys, const NameFetch& fetch) {
  ListedPage page;
  std::string cursor = after;
  // A page that starts after a common prefix starts past everything it stands for.
  if (!delimiter.empty() && after.ends_with(delimiter) && after.starts_with(prefix) && after.size() > prefix.size()) {
    cursor = after + std::string(kPastSubtree);
  }
  const std::string& last_in = after;
  std::string last = last_in;
  size_t count = 0;
  // A batch reads one entry more than the page has room for: that one, if it exists, is what
  // makes the page truncated. With a delimiter, batches are small: a common prefix ends one.
  const size_t max_batch = delimiter.empty() ? 10001 : 256;
  for (;;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(max_keys - count + 1, max_batch));
    auto batch = fetch(cursor, want);
    if (!batch.ok()) return batch.status();
    bool refetch = false;
    for (ObjectMeta& m : *batch) {
      cursor = m.name;
      if (!m.name.starts_with(prefix)) continue;  // (the store's prefix may be shorter)
      if (!delimiter.empty()) {
        size_t at = m.name.find(delimiter, prefix.size());
        if (at != std::string::npos) {
          std::string cp = m.name.substr(0, at + delimiter.size());
          cursor = cp + std::string(kPastSubtree);
          refetch = true;
          if (cp > last) {
            if (count == max_keys) {
              page.truncated = true;
              page.last = last;
              return page;
            }
            last = cp;
            page.prefixes.push_back(std::move(cp));
            ++count;
          }
          break;
        }
      }
      if (m.name <= last) continue;
      if (count == max_keys) {
        page.truncated = true;
        page.last = last;
        return page;
      }
      last = m.name;
      page.objects.push_back(std::move(m));
      ++count;
    }
    page.last = last == last_in ? "" : last;
    if (!refetch && batch->size() < want) return page;
  }
}

}  // namespace ais::s3
