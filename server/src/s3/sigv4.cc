#include "s3/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <ctime>
#include <map>
#include <utility>

#include "s3/checksums.h"  // HexOf
#include "util/strings.h"

namespace ais::s3 {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr auto kMaxSkew = std::chrono::minutes(15);  // S3's RequestTimeTooSkewed bound
constexpr int64_t kMaxPresignedExpiry = 7 * 24 * 3600;
constexpr std::string_view kSigV2Refused =
    "SigV2 signatures are not accepted: sign with SigV4 (boto3 presigned URLs: "
    "Config(signature_version=\"s3v4\"))";

// OpenSSL 3's one-shot HMAC() and SHA256() look their algorithms up on every call: each I/O
// thread fetches them once and reuses its contexts.
class ThreadCrypto {
 public:
  ThreadCrypto()
      : mac_(EVP_MAC_fetch(nullptr, "HMAC", nullptr)),
        mac_ctx_(mac_ ? EVP_MAC_CTX_new(mac_) : nullptr),
        md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)),
        md_ctx_(EVP_MD_CTX_new()) {
    params_[0] = OSSL_PARAM_construct_utf8_string("digest", const_cast<char*>("SHA256"), 0);
    params_[1] = OSSL_PARAM_construct_end();
  }
  ~ThreadCrypto() {
    EVP_MD_CTX_free(md_ctx_);
    EVP_MD_free(md_);
    EVP_MAC_CTX_free(mac_ctx_);
    EVP_MAC_free(mac_);
  }
  ThreadCrypto(const ThreadCrypto&) = delete;
  ThreadCrypto& operator=(const ThreadCrypto&) = delete;

  // Raw HMAC-SHA256; empty if OpenSSL failed (which then matches no signature).
  std::string Hmac(std::string_view key, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    size_t n = 0;
    if (mac_ctx_ == nullptr ||
        EVP_MAC_init(mac_ctx_, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params_) != 1 ||
        EVP_MAC_update(mac_ctx_, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
        EVP_MAC_final(mac_ctx_, out, &n, sizeof(out)) != 1) {
      return {};
    }
    return std::string(reinterpret_cast<char*>(out), n);
  }
  // Raw SHA-256; empty if OpenSSL failed.
  std::string Sha256(std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (md_ == nullptr || md_ctx_ == nullptr || EVP_DigestInit_ex2(md_ctx_, md_, nullptr) != 1 ||
        EVP_DigestUpdate(md_ctx_, data.data(), data.size()) != 1 || EVP_DigestFinal_ex(md_ctx_, out, &n) != 1) {
      return {};
    }
    return std::string(reinterpret_cast<char*>(out), n);
  }

 private:
  EVP_MAC* mac_;
  EVP_MAC_CTX* mac_ctx_;
  EVP_MD* md_;
  EVP_MD_CTX* md_ctx_;
  OSSL_PARAM params_[2];
};

ThreadCrypto& Crypto() {
  thread_local ThreadCrypto crypto;
  return crypto;
}

std::string Hmac(std::string_view key, std::string_view data) { return Crypto().Hmac(key, data); }
std::string Sha256(std::string_view data) { return Crypto().Sha256(data); }

bool SameSignature(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// AWS's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex); '/' kept in
// paths.
std::string AwsEncode(std::string_view s, bool keep_slash) { return PercentEncode(s, keep_slash ? "-_.~/" : "-_.~"); }

struct QueryParam {
  std::string name;   // decoded
  std::string value;  // decoded
};

std::optional<std::vector<QueryParam>> ParseQuery(std::string_view raw) {
  std::vector<QueryParam> out;
  for (std::string_view part : Split(raw, '&')) {
    if (part.empty()) continue;
    auto eq = part.find('=');
    auto name = PercentDecode(part.substr(0, eq), true);
    auto value = PercentDecode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1), true);
    if (!name || !value) return std::nullopt;
    out.push_back({std::move(*name), std::move(*value)});
  }
  return out;
}

const QueryParam* Find(const std::vector<QueryParam>& q, std::string_view name) {
  for (const auto& p : q) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A header value as SigV4 canonicalizes it: trimmed, inner runs of spaces as one.
std::string CanonicalValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : Trim(v)) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// What the signature covers, taken from the header or the presigned query.
struct Signed {
  std::string access_key;
  std::string date;  // YYYYMMDD of the scope
  std::string region;
  std::string service;
  std::vector<std::string> headers;  // lower-case names, as listed
  std::string signature;
  std::string amz_date;
  bool presigned = false;
  int64_t expires = 0;
};

Status Malformed(SigV4Failure* f, const std::string& what) {
  f->code = "AuthorizationHeaderMalformed";
  return Status::InvalidArgument("the authorization is malformed: " + what);
}

Status Denied(SigV4Failure* f, std::string code, std::string_view what) {
  f->code = std::move(code);
  return Status::Forbidden(std::string(what));
}

// "<key>/<date>/<region>/<service>/aws4_request"
Status ParseCredential(std::string_view cred, Signed* s, SigV4Failure* f) {
  auto parts = Split(cred, '/');
  if (parts.size() != 5 || parts[0].empty() || parts[4] != "aws4_request" || parts[1].size() != 8) {
    return Malformed(f, "credential \"" + std::string(cred.substr(0, 128)) + "\" is not <key>/<date>/<region>/<service>/aws4_request");
  }
  s->access_key = parts[0];
  s->date = parts[1];
  s->region = parts[2];
  s->service = parts[3];
  return Status::OK();
}

Status ParseHeaderList(std::string_view list, Signed* s, SigV4Failure* f) {
  for (std::string_view h : Split(list, ';')) {
    if (h.empty()) return Malformed(f, "empty name in SignedHeaders");
    std::string name(h);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    s->headers.push_back(std::move(name));
  }
  if (s->headers.empty()) return Malformed(f, "no SignedHeaders");
  return Status::OK();
}

// Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...
Status ParseAuthorization(std::string_view auth, Signed* s, SigV4Failure* f) {
  if (auth.starts_with("AWS ")) return Denied(f, "AccessDenied", kSigV2Refused);
  if (!auth.starts_with(kAlgorithm) || auth.size() == kAlgorithm.size() || auth[kAlgorithm.size()] != ' ') {
    return Malformed(f, "only AWS4-HMAC-SHA256 signatures are accepted");
  }
  bool cred = false, list = false;
  for (std::string_view item : Split(auth.substr(kAlgorithm.size() + 1), ',')) {
    item = Trim(item);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) return Malformed(f, "\"" + std::string(item.substr(0, 64)) + "\" is not name=value");
    std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    if (name == "Credential") {
      AIS_RETURN_IF_ERROR(ParseCredential(value, s, f));
      cred = true;
    } else if (name == "SignedHeaders") {
      AIS_RETURN_IF_ERROR(ParseHeaderList(value, s, f));
      list = true;
    } else if (name == "Signature") {
      s->signature = value;
    }
  }
  if (!cred || !list || s->signature.empty()) return Malformed(f, "expecting Credential, SignedHeaders and Signature");
  return Status::OK();
}

Status ParsePresigned(const std::vector<QueryParam>& q, Signed* s, SigV4Failure* f) {
  s->presigned = true;
  const QueryParam* algo = Find(q, "X-Amz-Algorithm");
  if (algo == nullptr || algo->value != kAlgorithm) return Malformed(f, "X-Amz-Algorithm must be AWS4-HMAC-SHA256");
  const QueryParam* cred = Find(q, "X-Amz-Credential");
  const QueryParam* list = Find(q, "X-Amz-SignedHeaders");
  const QueryParam* sig = Find(q, "X-Amz-Signature");
  const QueryParam* date = Find(q, "X-Amz-Date");
  const QueryParam* expires = Find(q, "X-Amz-Expires");
  if (!cred || !list || !sig || !date || !expires) {
    return Malformed(f, "a presigned URL needs X-Amz-Credential, -SignedHeaders, -Signature, -Date and -Expires");
  }
  AIS_RETURN_IF_ERROR(ParseCredential(cred->value, s, f));
  AIS_RETURN_IF_ERROR(ParseHeaderList(list->value, s, f));
  s->signature = sig->value;
  s->amz_date = date->value;
  auto secs = ParseUint(expires->value);
  if (!secs || *secs < 1 || *secs > static_cast<uint64_t>(kMaxPresignedExpiry)) {
    return Malformed(f, "X-Amz-Expires must be 1 to 604800 seconds");
  }
  s->expires = static_cast<int64_t>(*secs);
  return Status::OK();
}

// YYYYMMDDTHHMMSSZ as a time point.
std::optional<std::chrono::system_clock::time_point> ParseAmzDate(std::string_view d) {
  if (d.size() != 16 || d[8] != 'T' || d[15] != 'Z') return std::nullopt;
  std::tm tm{};
  auto num = [&](size_t at, size_t len) -> std::optional<int> {
    auto v = ParseUint(d.substr(at, len));
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  auto y = num(0, 4), mo = num(4, 2), da = num(6, 2), h = num(9, 2), mi = num(11, 2), se = num(13, 2);
  if (!y || !mo || !da || !h || !mi || !se || *mo < 1 || *mo > 12 || *da < 1 || *da > 31 || *h > 23 || *mi > 59 ||
      *se > 60) {
    return std::nullopt;
  }
  tm.tm_year = *y - 1900;
  tm.tm_mon = *mo - 1;
  tm.tm_mday = *da;
  tm.tm_hour = *h;
  tm.tm_min = *mi;
  tm.tm_sec = *se;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// The key of a secret's scope (a day, a region, a service): four HMACs, the same for every
// request of that day, so each I/O thread keeps the ones it derived (a handful of keys a day).
std::string SigningKey(std::string_view secret, const Signed& s) {
  thread_local std::map<std::string, std::string, std::less<>> derived;
  std::string id = std::string(secret) + '\n' + s.date + '/' + s.region + '/' + s.service;
  if (auto it = derived.find(id); it != derived.end()) return it->second;
  std::string k = Hmac("AWS4" + std::string(secret), s.date);
  k = Hmac(k, s.region);
  k = Hmac(k, s.service);
  k = Hmac(k, "aws4_request");
  if (derived.size() >= 64) derived.clear();
  derived.emplace(std::move(id), k);
  return k;
}

}  // namespace

Result<AccessKeys> LoadAccessKeys(const std::string& path) {
  boost::property_tree::ptree tree;
  try {
    boost::property_tree::ini_parser::read_ini(path, tree);
  } catch (const std::exception& e) {
    return Status::InvalidArgument("S3 credentials " + path + ": " + e.what());
  }
  AccessKeys keys;
  for (const auto& [profile, section] : tree) {
    std::string id = section.get<std::string>("aws_access_key_id", "");
    std::string secret = section.get<std::string>("aws_secret_access_key", "");
    if (id.empty() && secret.empty()) continue;
    if (id.empty() || secret.empty()) {
      return Status::InvalidArgument("S3 credentials " + path + ": profile [" + profile +
                                     "] needs both aws_access_key_id and aws_secret_access_key");
    }
    keys[id] = secret;
  }
  if (keys.empty()) return Status::InvalidArgument("S3 credentials " + path + ": no access key in it");
  return keys;
}

bool HasSigV4(const SignedRequest& req) {
  auto auth = req.header_values("authorization");
  if (!auth.empty() && (auth.front().starts_with("AWS4-") || auth.front().starts_with("AWS "))) return true;
  return req.raw_query.find("X-Amz-Signature=") != std::string_view::npos ||
         req.raw_query.find("AWSAccessKeyId=") != std::string_view::npos;
}

Result<SigV4Context> VerifySigV4(const SignedRequest& req, const AccessKeys& keys, SigV4Failure* failure) {
  auto query = ParseQuery(req.raw_query);
  if (!query) return Malformed(failure, "malformed percent-encoding in the query");
  Signed s;
  auto auth = req.header_values("authorization");
  if (!auth.empty()) {
    AIS_RETURN_IF_ERROR(ParseAuthorization(auth.front(), &s, failure));
    auto date = req.header_values("x-amz-date");
    if (date.empty()) date = req.header_values("date");
    if (date.empty()) return Denied(failure, "AccessDenied", "a signed request needs X-Amz-Date");
    s.amz_date = Trim(date.front());
  } else if (Find(*query, "X-Amz-Signature") != nullptr) {
    AIS_RETURN_IF_ERROR(ParsePresigned(*query, &s, failure));
  } else if (Find(*query, "AWSAccessKeyId") != nullptr && Find(*query, "Signature") != nullptr) {
    return Denied(failure, "AccessDenied", kSigV2Refused);
  } else {
    return Denied(failure, "AccessDenied", "the server requires SigV4-signed requests: no signature");
  }
  auto it = keys.find(s.access_key);
  if (it == keys.end()) {
    return Denied(failure, "InvalidAccessKeyId", "the access key Id \"" + s.access_key.substr(0, 128) +
                                                     "\" you provided does not exist in our records");
  }
  auto when = ParseAmzDate(s.amz_date);
  if (!when || s.amz_date.substr(0, 8) != s.date) {
    return Malformed(failure, "X-Amz-Date \"" + s.amz_date.substr(0, 32) + "\" is not the credential's date in YYYYMMDDTHHMMSSZ");
  }
  if (s.presigned) {
    if (req.now < *when - kMaxSkew) return Denied(failure, "AccessDenied", "the presigned URL is not valid yet");
    if (req.now > *when + std::chrono::seconds(s.expires)) return Denied(failure, "AccessDenied", "Request has expired");
  } else if (req.now > *when + kMaxSkew || req.now < *when - kMaxSkew) {
    return Denied(failure, "RequestTimeTooSkewed",
                  "the difference between the request time and the server's time is too large");
  }

  // The canonical request.
  std::string canonical(req.method);
  canonical += '\n';
  auto path = PercentDecode(req.raw_path, false);
  if (!path) return Malformed(failure, "malformed percent-encoding in the path");
  canonical += AwsEncode(path->empty() ? "/" : *path, true);
  canonical += '\n';
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& p : *query) {
    if (s.presigned && p.name == "X-Amz-Signature") continue;
    params.emplace_back(AwsEncode(p.name, false), AwsEncode(p.value, false));
  }
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) canonical += '&';
    canonical += params[i].first + "=" + params[i].second;
  }
  canonical += '\n';
  bool host_signed = false;
  for (const std::string& name : s.headers) {
    host_signed = host_signed || name == "host";
    std::string joined;
    for (std::string_view v : req.header_values(name)) {
      if (!joined.empty()) joined += ',';
      joined += CanonicalValue(v);
    }
    canonical += name + ":" + joined + "\n";
  }
  if (!host_signed) return Malformed(failure, "the host header must be signed");
  canonical += '\n';
  for (size_t i = 0; i < s.headers.size(); ++i) canonical += (i > 0 ? ";" : "") + s.headers[i];
  canonical += '\n';
  std::string payload;
  if (s.presigned) {
    const QueryParam* p = Find(*query, "X-Amz-Content-Sha256");
    payload = p ? p->value : "UNSIGNED-PAYLOAD";
  } else {
    auto sha = req.header_values("x-amz-content-sha256");
    if (sha.empty()) {
      failure->code = "InvalidRequest";
      return Status::InvalidArgument("missing required header for this request: x-amz-content-sha256");
    }
    payload = Trim(sha.front());
  }
  canonical += payload;

  const std::string scope = s.date + "/" + s.region + "/" + s.service + "/aws4_request";
  const std::string to_sign =
      std::string(kAlgorithm) + "\n" + s.amz_date + "\n" + scope + "\n" + HexOf(Sha256(canonical));
  std::string key = SigningKey(it->second, s);
  const std::string expected = HexOf(Hmac(key, to_sign));
  if (!SameSignature(expected, s.signature)) {
    return Denied(failure, "SignatureDoesNotMatch",
                  "the request signature we calculated does not match the signature you provided; check your key "
                  "and signing method");
  }
  return SigV4Context{.access_key = s.access_key,
                      .signature = expected,
                      .amz_date = s.amz_date,
                      .scope = scope,
                      .signing_key = std::move(key),
                      .payload_hash = std::move(payload)};
}

Status ChunkSignatures::Check(std::string_view ext, std::string_view data_sha256) {
  constexpr std::string_view kName = "chunk-signature=";
  std::string_view given;
  for (std::string_view item : Split(ext, ';')) {
    if (Trim(item).starts_with(kName)) given = Trim(item).substr(kName.size());
  }
  if (given.empty()) return Status::Forbidden("aws-chunked: a chunk has no chunk-signature");
  static const std::string kEmptyHash = HexOf(Sha256(""));
  const std::string to_sign = "AWS4-HMAC-SHA256-PAYLOAD\n" + ctx_.amz_date + "\n" + ctx_.scope + "\n" + previous_ +
                              "\n" + kEmptyHash + "\n" + HexOf(data_sha256);
  std::string expected = HexOf(Hmac(ctx_.signing_key, to_sign));
  if (!SameSignature(expected, given)) return Status::Forbidden("aws-chunked: a chunk signature does not match");
  previous_ = std::move(expected);
  return Status::OK();
}

Status ChunkSignatures::CheckTrailer(const std::vector<std::pair<std::string, std::string>>& trailers,
                                     std::string_view given) {
  std::string text;
  for (const auto& [name, value] : trailers) text += name + ":" + value + "\n";
  const std::string to_sign = "AWS4-HMAC-SHA256-TRAILER\n" + ctx_.amz_date + "\n" + ctx_.scope + "\n" + previous_ +
                              "\n" + HexOf(Sha256(text));
  if (!SameSignature(HexOf(Hmac(ctx_.signing_key, to_sign)), given)) {
    return Status::Forbidden("aws-chunked: the trailer signature does not match");
  }
  return Status::OK();
}

}  // namespace ais::s3
