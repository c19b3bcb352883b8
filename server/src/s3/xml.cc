#include "s3/xml.h"

#include <ctime>
#include <sstream>

namespace ais::s3 {
namespace {

struct StringWriter final : pugi::xml_writer {
  std::string out;
  void write(const void* data, size_t size) override { out.append(static_cast<const char*>(data), size); }
};

Result<pugi::xml_document*> Parse(pugi::xml_document* doc, std::string_view body, const char* what) {
  if (body.empty()) return Status::InvalidArgument(std::string(what) + ": empty request body");
  // No entity expansion beyond XML's five, no DTD processing: pugixml does neither.
  pugi::xml_parse_result r = doc->load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r) {
    return Status::InvalidArgument(std::string(what) + ": malformed XML at offset " + std::to_string(r.offset) + ": " +
                                   r.description());
  }
  return doc;
}

// The element's name without a namespace prefix ("s3:Key" -> "Key").
std::string_view LocalName(const pugi::xml_node& n) {
  std::string_view name = n.name();
  auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

pugi::xml_node Child(const pugi::xml_node& parent, std::string_view name) {
  for (pugi::xml_node c = parent.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && LocalName(c) == name) return c;
  }
  return {};
}

}  // namespace

XmlDoc::XmlDoc(const char* root, bool ns) {
  pugi::xml_node decl = doc_.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  root_ = doc_.append_child(root);
  if (ns) root_.append_attribute("xmlns") = kS3Namespace;
}

std::string XmlDoc::Text() const {
  StringWriter w;
  doc_.save(w, "", pugi::format_raw, pugi::encoding_utf8);
  return std::move(w.out);
}

pugi::xml_node AddText(pugi::xml_node parent, const char* name, std::string_view text) {
  pugi::xml_node n = parent.append_child(name);
  n.append_child(pugi::node_pcdata).set_value(text.data(), text.size());
  return n;
}

std::string Iso8601(int64_t unix_ns) {
  // Civil date from days since the epoch (H. Hinnant's algorithm): no gmtime_r/strftime per
  // listed entry.
  if (unix_ns < 0) unix_ns = 0;
  const int64_t secs = unix_ns / 1000000000;
  const int ms = static_cast<int>((unix_ns / 1000000) % 1000);
  int64_t days = secs / 86400;
  const int64_t sod = secs % 86400;
  days += 719468;
  const int64_t era = days / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[32];
  auto put = [&](int at, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[at + i] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  buf[4] = '-';
  put(5, m, 2);
  buf[7] = '-';
  put(8, d, 2);
  buf[10] = 'T';
  put(11, sod / 3600, 2);
  buf[13] = ':';
  put(14, sod / 60 % 60, 2);
  buf[16] = ':';
  put(17, sod % 60, 2);
  buf[19] = '.';
  put(20, ms, 3);
  buf[23] = 'Z';
  return std::string(buf, 24);
}

std::string UrlEncodeKey(std::string_view key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(key.size());
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string ListResultXml(const ListResult& r) {
  XmlDoc doc("ListBucketResult");
  pugi::xml_node root = doc.root();
  auto enc = [&](std::string_view s) { return r.url_encoding ? UrlEncodeKey(s) : std::string(s); };
  AddText(root, "Name", r.bucket);
  AddText(root, "Prefix", enc(r.prefix));
  if (r.v2) {
    if (!r.continuation_token.empty()) AddText(root, "ContinuationToken", r.continuation_token);
    if (!r.next_continuation_token.empty()) AddText(root, "NextContinuationToken", r.next_continuation_token);
    if (!r.start_after.empty()) AddText(root, "StartAfter", enc(r.start_after));
    AddText(root, "KeyCount", std::to_string(r.objects.size() + r.common_prefixes.size()));
  } else {
    AddText(root, "Marker", enc(r.marker));
    if (!r.next_marker.empty()) AddText(root, "NextMarker", enc(r.next_marker));
  }
  AddText(root, "MaxKeys", std::to_string(r.max_keys));
  if (!r.delimiter.empty()) AddText(root, "Delimiter", enc(r.delimiter));
  if (r.url_encoding) AddText(root, "EncodingType", "url");
  AddText(root, "IsTruncated", r.truncated ? "true" : "false");
  for (const ListedObject& o : r.objects) {
    pugi::xml_node c = root.append_child("Contents");
    AddText(c, "Key", enc(o.key));
    AddText(c, "LastModified", Iso8601(o.last_modified_ns));
    AddText(c, "ETag", o.etag);
    AddText(c, "Size", std::to_string(o.size));
    if (!r.v2 || r.fetch_owner) {
      pugi::xml_node owner = c.append_child("Owner");
      AddText(owner, "ID", "1");
      AddText(owner, "DisplayName", "aistore");
    }
    AddText(c, "StorageClass", "STANDARD");
  }
  for (const std::string& p : r.common_prefixes) {
    AddText(root.append_child("CommonPrefixes"), "Prefix", enc(p));
  }
  return doc.Text();
}

Result<DeleteRequest> ParseDeleteRequest(std::string_view body) {
  pugi::xml_document doc;
  auto parsed = Parse(&doc, body, "Delete");
  if (!parsed.ok()) return parsed.status();
  pugi::xml_node root = doc.document_element();
  if (LocalName(root) != "Delete") return Status::InvalidArgument("Delete: root element must be <Delete>");
  DeleteRequest out;
  for (pugi::xml_node n = root.first_child(); n; n = n.next_sibling()) {
    if (n.type() != pugi::node_element) continue;
    std::string_view name = LocalName(n);
    if (name == "Quiet") {
      std::string_view v = n.child_value();
      out.quiet = v == "true" || v == "True" || v == "TRUE";
    } else if (name == "Object") {
      pugi::xml_node key = Child(n, "Key");
      if (!key) return Status::InvalidArgument("Delete: <Object> without <Key>");
      if (out.keys.size() == kMaxDeleteKeys) {
        return Status::InvalidArgument("Delete: more than " + std::to_string(kMaxDeleteKeys) + " keys");
      }
      out.keys.emplace_back(key.child_value());
    }
  }
  if (out.keys.empty()) return Status::InvalidArgument("Delete: no <Object> to delete");
  return out;
}

Result<std::vector<CompletedPart>> ParseCompleteRequest(std::string_view body, size_t max_parts) {
  pugi::xml_document doc;
  auto parsed = Parse(&doc, body, "CompleteMultipartUpload");
  if (!parsed.ok()) return parsed.status();
  pugi::xml_node root = doc.document_element();
  if (LocalName(root) != "CompleteMultipartUpload") {
    return Status::InvalidArgument("CompleteMultipartUpload: root element must be <CompleteMultipartUpload>");
  }
  std::vector<CompletedPart> out;
  for (pugi::xml_node n = root.first_child(); n; n = n.next_sibling()) {
    if (n.type() != pugi::node_element || LocalName(n) != "Part") continue;
    if (out.size() == max_parts) {
      return Status::InvalidArgument("CompleteMultipartUpload: more than " + std::to_string(max_parts) + " parts");
    }
    pugi::xml_node num = Child(n, "PartNumber");
    std::string_view text = num ? num.child_value() : "";
    uint64_t v = 0;
    bool ok = !text.empty() && text.size() <= 10;
    for (char c : text) {
      if (c < '0' || c > '9') ok = false;
      else v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || v == 0 || v > UINT32_MAX) {
      return Status::InvalidArgument("CompleteMultipartUpload: invalid <PartNumber> \"" +
                                     std::string(text.substr(0, 32)) + "\"");
    }
    std::string etag = Child(n, "ETag").child_value();
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    out.push_back(CompletedPart{.number = static_cast<uint32_t>(v), .etag = std::move(etag)});
  }
  if (out.empty()) return Status::InvalidArgument("CompleteMultipartUpload: no <Part> listed");
  return out;
}

Result<std::string> ParseVersioningRequest(std::string_view body) {
  pugi::xml_document doc;
  auto parsed = Parse(&doc, body, "VersioningConfiguration");
  if (!parsed.ok()) return parsed.status();
  pugi::xml_node root = doc.document_element();
  if (LocalName(root) != "VersioningConfiguration") {
    return Status::InvalidArgument("VersioningConfiguration: root element must be <VersioningConfiguration>");
  }
  std::string status = Child(root, "Status").child_value();
  if (status != "Enabled" && status != "Suspended") {
    return Status::InvalidArgument("VersioningConfiguration: <Status> must be Enabled or Suspended");
  }
  return status;
}

}  // namespace ais::s3
