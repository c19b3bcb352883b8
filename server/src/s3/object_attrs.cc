#include "s3/object_attrs.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "util/base64.h"
#include "api/object_list.h"
#include "s3/checksums.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// A value that can go into a header as is: printable ASCII and tabs, no CR/LF.
bool IsHeaderSafe(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u < 0x7f);
  });
}

bool Reserved(std::string_view key) {
  static constexpr std::string_view kOwn[] = {"ETag", "Content-Type", "source", "md5", "LastModified", "Last-Modified",
                                              "version"};
  for (auto k : kOwn) {
    if (key == k) return true;
  }
  return key.starts_with(kChecksumKeyPrefix);
}

std::string_view Unquote(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.starts_with("W/")) s.remove_prefix(2);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::optional<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int h = nib(hex[i]), l = nib(hex[i + 1]);
    if (h < 0 || l < 0) return std::nullopt;
    out.push_back(static_cast<char>(h << 4 | l));
  }
  return out;
}

}  // namespace

std::string StoredChecksum(std::string_view base64) {
  auto raw = DecodeBase64(base64);
  return raw ? HexOf(*raw) : "";
}

std::string StoredContentType(std::string_view ct) {
  std::string out;
  for (char c : ct) {
    if (c == '%') out += "%25";
    else if (c == ',') out += "%2C";
    else if (c == '=') out += "%3D";
    else out.push_back(c);
  }
  return out;
}

std::string ContentTypeOf(const ObjectMeta& m) {
  const std::string* ct = m.custom_value(kContentTypeKey);
  if (!ct || ct->empty()) return "application/octet-stream";
  auto decoded = PercentDecode(*ct, false);
  return decoded && IsHeaderSafe(*decoded) ? *decoded : "application/octet-stream";
}

std::string EtagOf(const ObjectMeta& m) {
  if (const std::string* e = m.custom_value(kEtagKey); e && !e->empty()) return std::string(Unquote(*e));
  if (m.cksum_value.empty()) return "";
  if (m.cksum_type == "md5" && !m.chunked()) return m.cksum_value;
  return "v1-" + m.cksum_value + "-" + Base36(static_cast<uint64_t>(m.atime_ns));
}

std::string QuotedEtag(const ObjectMeta& m) {
  std::string e = EtagOf(m);
  return e.empty() ? e : "\"" + e + "\"";
}

HeaderList ObjectHeaders(const ObjectMeta& m, bool checksum_mode) {
  HeaderList h;
  if (std::string etag = QuotedEtag(m); !etag.empty()) h.emplace_back("ETag", std::move(etag));
  const std::string* lm = m.custom_value("Last-Modified");
  h.emplace_back("Last-Modified", lm && IsHeaderSafe(*lm) ? *lm : FormatHttpDate(m.atime_ns));
  h.emplace_back("Accept-Ranges", "bytes");
  if (const std::string* v = m.custom_value("version"); v && IsHeaderSafe(*v)) h.emplace_back("x-amz-version-id", *v);
  for (const auto& [k, v] : m.custom) {
    if (k.starts_with(kChecksumKeyPrefix)) {
      if (auto raw = FromHex(v); checksum_mode && raw) h.emplace_back(k, EncodeBase64(*raw));
      continue;
    }
    if (Reserved(k) || !IsHeaderSafe(v)) continue;
    std::string name = k;
    // A remote object's S3 metadata is kept as "X-Amz-Meta-<Name>" (remote/cache_tier.cc).
    if (name.size() > 11 && IEquals(std::string_view(name).substr(0, 11), "x-amz-meta-")) name.erase(0, 11);
    if (!IsToken(name)) continue;
    std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    h.emplace_back("x-amz-meta-" + name, v);
  }
  return h;
}

Result<CustomMd> UserMetadata(const Exchange& ex) {
  CustomMd out;
  size_t total = 0;
  for (const auto& [name, value] : ex.headers_with_prefix("x-amz-meta-")) {
    std::string key(name.substr(11));
    std::transform(key.begin(), key.end(), key.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    if (!IsToken(key)) return Status::InvalidArgument("invalid metadata header name \"" + std::string(name.substr(0, 64)) + "\"");
    if (Reserved(key) || key == "etag" || key == "content-type") {
      key = "x-amz-meta-" + key;  // kept under its full name: the front end's own keys stay its own
    }
    total += key.size() + value.size();
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != out.end()) it->second += "," + std::string(value);
    else out.emplace_back(std::move(key), std::string(value));
  }
  if (total > kMaxUserMetadata) {
    return Status::InvalidArgument("user metadata exceeds " + std::to_string(kMaxUserMetadata) + " bytes");
  }
  if (std::string_view ct = ex.header("Content-Type"); !ct.empty()) {
    out.emplace_back(std::string(kContentTypeKey), StoredContentType(ct));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int64_t> ParseHttpDate(std::string_view s) {
  std::string text(s);
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  if (!end) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

bool EtagListMatches(std::string_view list, std::string_view etag) {
  for (std::string_view item : Split(list, ',')) {
    std::string_view v = Unquote(item);
    if (v == "*" || (!etag.empty() && v == etag)) return true;
  }
  return false;
}

Condition CheckConditions(const Exchange& ex, const ObjectMeta& m, bool copy_source) {
  const std::string pre = copy_source ? "x-amz-copy-source-" : "";
  std::string_view if_match = ex.header(pre + "if-match");
  std::string_view if_none = ex.header(pre + "if-none-match");
  std::string_view if_unmod = ex.header(pre + "if-unmodified-since");
  std::string_view if_mod = ex.header(pre + "if-modified-since");
  if (if_match.empty() && if_none.empty() && if_unmod.empty() && if_mod.empty()) return Condition::kPass;
  const std::string etag = EtagOf(m);
  const int64_t mtime = m.atime_ns / 1000000000;  // HTTP dates have seconds
  const Condition not_modified = copy_source ? Condition::kFailed : Condition::kNotModified;
  if (!if_match.empty()) {
    if (!EtagListMatches(if_match, etag)) return Condition::kFailed;
  } else if (!if_unmod.empty()) {
    if (auto t = ParseHttpDate(if_unmod); t && mtime > *t) return Condition::kFailed;
  }
  if (!if_none.empty()) {
    if (EtagListMatches(if_none, etag)) return not_modified;
  } else if (!if_mod.empty()) {
    if (auto t = ParseHttpDate(if_mod); t && mtime <= *t) return not_modified;
  }
  return Condition::kPass;
}

}  // namespace ais::s3
