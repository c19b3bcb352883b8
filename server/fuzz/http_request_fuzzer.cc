// Raw bytes as one HTTP request, read the way a Session reads it (http/server.cc): Beast's
// request parser with the server's header limit, fed in two pieces; then what the router does
// with it: the Exchange's path, query, header and Content-Length lookups (http/exchange.cc),
// the /v1/<area>/<bucket>/<object> split with percent-decoding (ParseRoute, as Dispatch calls it)
// and the name checks and on-disk path of the store (store/names.h).
//
// Dispatch itself is not called: it needs a ServerContext over a live Store and replies on a
// connected socket.
//
// Properties: a query key present in the target is found by Exchange::query; every decoded path
// part and query value survives percent-encoding and a second parse unchanged (a new request
// built from them); a valid object name maps to a relative path without '.', '..' or empty
// components that maps back to the name.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/headers.h"
#include "api/route.h"
#include "fuzz_check.h"
#include "http/exchange.h"
#include "http/stream.h"
#include "store/names.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kHeaderLimit = 64 << 10;  // HttpServerOptions::header_limit

// Query keys the handlers ask for (handlers/*.cc).
constexpr std::string_view kQueryKeys[] = {
    "provider", "namespace", "props", "uuid", "what", "archpath", "archmime", "archregx", "archmode",
    "uploadId", "partNumber", "append_type", "append_handle", "presence", "coloc", "bck_to", "object_to",
};

struct Parsed {
  RequestParser parser;
  bool ok = false;
};

// Parses the header as async_read_header does: whatever is buffered is offered again with the
// next piece until the header is complete. `split`: bytes in the first piece.
void ParseHeader(std::string_view in, size_t split, Parsed* p) {
  p->parser.header_limit(static_cast<std::uint32_t>(kHeaderLimit));
  p->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  size_t used = 0;
  for (size_t avail : {std::min(split, in.size()), in.size()}) {
    while (!p->parser.is_header_done() && used < avail) {
      beast::error_code ec;
      size_t n = p->parser.put(asio::buffer(in.data() + used, avail - used), ec);
      used += n;
      if (ec == http::error::need_more) break;
      if (ec) return;
      if (n == 0) break;
    }
  }
  p->ok = p->parser.is_header_done();
}

// Every byte outside RFC 3986's unreserved set as %XX: what any client's encoder may send.
std::string Escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}


void CheckObjectName(const std::string& name) {
  if (!ValidateObjectName(name, true).ok()) return;
  std::string rel = ObjectRelPath(name);
  FUZZ_CHECK(!rel.starts_with('/'));
  std::string back;
  for (auto comp : Split(rel, '/')) {
    FUZZ_CHECK(comp != "." && comp != "..");
    if (!back.empty()) {
      FUZZ_CHECK(back.back() == kDirSuffix);  // every directory carries the suffix
      back.back() = '/';
    }
    back += comp;
  }
  FUZZ_CHECK(back == name);
}

Exchange MakeExchange(Parsed& p) {
  static asio::io_context io;
  static Stream stream{tcp::socket(io)};  // never connected: nothing here does I/O
  static beast::flat_buffer buffer;
  static const NodeInfo node{"t[fuzz]", "fuzz"};
  return Exchange(stream, buffer, p.parser, node, "127.0.0.1:1");
}

}  // namespace
}  // namespace ais

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ais;
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  Parsed p;
  ParseHeader(in, data[0] * in.size() / 255, &p);
  if (!p.ok) return 0;
  Exchange ex = MakeExchange(p);
  std::string_view target = p.parser.get().target();
  std::string_view path = ex.raw_path();
  FUZZ_CHECK(target.starts_with(path));

  // The handlers' lookups.
  (void)ex.method();
  (void)ex.content_length();
  (void)ex.header("Range");
  (void)ex.header_all(hdr::kCustomMd);
  (void)IEquals(ex.header("Expect"), "100-continue");

  // Query: the known keys and the first few the target itself names.
  std::vector<std::pair<std::string, std::string>> found;
  auto lookup = [&](std::string_view key) {
    for (auto& [k, v] : found) {
      if (k == key) return;
    }
    if (auto v = ex.query(key)) found.emplace_back(std::string(key), std::move(*v));
  };
  for (auto key : kQueryKeys) lookup(key);
  if (auto q = target.find('?'); q != std::string_view::npos) {
    int n = 0;
    for (auto kv : Split(target.substr(q + 1), '&')) {
      if (kv.empty() || ++n > 8) continue;
      auto key = PercentDecode(kv.substr(0, kv.find('=')), true);
      if (!key) continue;
      FUZZ_CHECK(ex.query(*key).has_value());
      lookup(*key);
    }
  }

  auto parsed = ParseRoute(path);
  const bool routed = parsed.ok();
  const Route route = routed ? *parsed : Route{};
  if (routed) {
    (void)ValidateBucketName(route.bucket);
    CheckObjectName(route.object);
  }

  // Round trip: a request built from the decoded parts parses back to the same parts.
  std::string target2 = "/v1/" + route.area;  // the area is matched undecoded
  if (routed && (!route.bucket.empty() || !route.object.empty())) {
    target2 += "/" + Escape(route.bucket);
    if (!route.object.empty()) target2 += "/" + Escape(route.object);
  }
  std::string sep = "?";
  for (auto& [k, v] : found) {
    target2 += sep + Escape(k) + "=" + Escape(v);
    sep = "&";
  }
  std::string req2 = "GET " + target2 + " HTTP/1.1\r\nHost: x\r\n\r\n";
  if (req2.size() > kHeaderLimit) return 0;
  Parsed p2;
  ParseHeader(req2, req2.size(), &p2);
  FUZZ_CHECK(p2.ok);
  Exchange ex2 = MakeExchange(p2);
  for (auto& [k, v] : found) FUZZ_CHECK(ex2.query(k) == v);
  auto route2 = ParseRoute(ex2.raw_path());
  FUZZ_CHECK(route2.ok());
  if (routed) {
    FUZZ_CHECK(route2->area == route.area);
    FUZZ_CHECK(route2->bucket == route.bucket);
    FUZZ_CHECK(route2->object == route.object);
  }
  return 0;
}
