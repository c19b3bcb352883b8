// The S3 front end's entry: the bucket and key a request names, its signature and token checked,
// its bucket resolved, its operation's handler called (the operation is the route table's:
// router/routes.cc), and the one place S3 errors are replied.
#include <vector>

#include "api/features.h"
#include "auth/access.h"
#include "auth/authorizer.h"
#include "service/access.h"
#include "s3/request.h"
#include "s3/s3.h"
#include "s3/xml.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/log_ring.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

// Subresources S3 has and this server does not (bucket or object level): 501 NotImplemented.
constexpr std::string_view kUnsupported[] = {"acl",       "policy",  "cors",          "lifecycle", "tagging",
                                             "website",   "logging", "notification",  "replication",
                                             "encryption", "object-lock", "retention", "legal-hold",
                                             "accelerate", "requestPayment", "analytics", "metrics",
                                             "inventory", "intelligent-tiering", "ownershipControls",
                                             "publicAccessBlock", "select", "restore", "torrent",
                                             "attributes", "versions", "policyStatus"};

// Go's path.Clean of a key without its leading '/': "a//b/./c/../d/" -> "a/b/d".
std::string CleanKey(std::string_view key) {
  std::vector<std::string_view> parts;
  for (std::string_view p : Split(key, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back('/');
    out.append(parts[i]);
  }
  return out;
}

Status ResolveByName(Request& r) {
  auto key = BucketByName(r, r.bucket_name);
  if (!key.ok()) return key.status();
  r.bucket = std::move(*key);
  return Status::OK();
}

// Access control (service/access.h) with AIS's bits per S3 operation (the route table's). S3
// clients carry the AIS token as their session token (X-Amz-Security-Token, header or
// presigned-URL parameter) since their Authorization header is their SigV4 signature; a Bearer
// Authorization works too. With tokens not required, SigV4 signatures and presigned parameters
// are accepted unchecked, as AIS does.

// How a grant names the bucket `name` is: s3:// when only a remote bucket has the name.
auth::BucketRef RefOf(const Request& r, std::string name) {
  const bool aws = !r.ctx.store.buckets().Get(name) && r.ctx.store.buckets().Get(BucketKey(kProviderAws, name));
  return {.name = std::move(name), .provider = aws ? std::string(kProviderAws) : "ais"};
}

// With S3 access keys configured: a signed request that verifies needs nothing more. With tokens
// required as well, a token (the session token S3 clients carry, signed with any key) may stand
// in for a signature that is absent or not by one of the keys. The S3 error code is set here.
Status CheckSignature(Request& r, bool* verified) {
  *verified = false;
  if (r.ctx.s3_access_keys.empty()) return Status::OK();
  SignedRequest req{.method = r.ex.method_string(),
                    .raw_path = r.ex.raw_path(),
                    .raw_query = r.ex.raw_query(),
                    .header_values = [&ex = r.ex](std::string_view name) { return ex.header_all(name); },
                    .now = std::chrono::system_clock::now()};
  const bool token_may_do = r.ctx.auth != nullptr && r.ctx.auth->required();
  if (!HasSigV4(req) && token_may_do) return Status::OK();
  SigV4Failure failure;
  auto ctx = VerifySigV4(req, r.ctx.s3_access_keys, &failure);
  if (!ctx.ok()) {
    const bool has_token = !AmzSecurityToken(r.ex).empty() || r.ex.header("Authorization").starts_with("Bearer ");
    if (token_may_do && has_token) return Status::OK();  // Authorize checks the token
    return r.Fail(failure.code, ctx.status());
  }
  r.sigv4 = std::move(*ctx);
  *verified = true;
  return Status::OK();
}

Status Authenticate(Request& r, auth::AccessAttrs bits) {
  bool verified = false;
  AIS_RETURN_IF_ERROR(CheckSignature(r, &verified));
  if (verified) return Status::OK();
  if (r.bucket_name.empty()) return Authorize(r.ctx, r.ex, bits, nullptr);
  const auth::BucketRef bucket = RefOf(r, r.bucket_name);
  AIS_RETURN_IF_ERROR(Authorize(r.ctx, r.ex, bits, &bucket));
  // CopyObject / UploadPartCopy read their source: GET on its bucket too.
  std::string_view source = r.ex.header("x-amz-copy-source");
  if (source.empty() || r.key.empty() || r.ex.method() != http::verb::put) return Status::OK();
  auto parsed = SplitCopySource(source);
  if (!parsed.ok()) return Status::OK();  // malformed: the copy itself refuses it, reading nothing
  const auth::BucketRef src = RefOf(r, parsed->bucket_name);
  return Authorize(r.ctx, r.ex, auth::kGet, &src);
}

Task<Handled> Unsupported(Request& r, std::string_view what) {
  co_return r.Fail("NotImplemented", Status::NotSupported(std::string(what) + " is not implemented by this server"));
}

std::string_view UnsupportedParam(const Request& r) {
  for (std::string_view p : kUnsupported) {
    if (r.has(p)) return p;
  }
  return {};
}

// The operation's handler, once the bucket it names is resolved (unless the operation creates
// it) and the key is valid. A subresource this server does not have is refused whatever the
// operation (after the bucket: a missing bucket is NoSuchBucket first).
Task<Handled> Call(Request& r, const Operation& op) {
  const std::string_view unsupported = UnsupportedParam(r);
  if (r.bucket_name.empty()) co_return co_await op.handler(r);
  r.scope = Scope::kBucket;
  if (!op.creates_bucket || !unsupported.empty()) {
    if (Status st = ResolveByName(r); !st.ok()) co_return st;
  }
  if (!r.key.empty()) {
    r.scope = Scope::kObject;
    if (Status st = ValidateObjectName(r.key); !st.ok()) co_return r.Fail("InvalidArgument", st);
  }
  if (!unsupported.empty()) {
    const std::string what = (r.key.empty() ? "bucket subresource ?" : "object subresource ?") + std::string(unsupported);
    co_return co_await Unsupported(r, what);
  }
  if (!r.key.empty() && r.has("uploadId")) r.scope = Scope::kUpload;
  co_return co_await op.handler(r);
}

Task<Handled> Route(Request& r, const Target& t, const Operation* op, auth::AccessAttrs bits,
                    std::string_view unmatched) {
  if (!t.error.ok()) co_return r.Fail(std::string(t.error_code), t.error);
  r.bucket_name = t.bucket_name;
  r.key = t.key;
  if (Status st = Authenticate(r, op ? op->bits : bits); !st.ok()) {
    co_return r.error_code.empty() ? r.Fail("AccessDenied", st) : st;
  }
  if (op) co_return co_await Call(r, *op);
  if (!unmatched.empty()) co_return r.Fail("InvalidRequest", Status::InvalidArgument(std::string(unmatched)));
  co_return Status::MethodNotAllowed("method " + std::string(r.ex.method_string()) + " is not allowed" +
                                     (t.bucket_name.empty() ? " on the service" : ""));
}

}  // namespace

Task<Handled> ReplyXml(Request& r, const XmlDoc& doc) {
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  std::string body = doc.Text();
  co_return co_await r.ex.Reply(http::status::ok, headers, std::move(body), "application/xml");
}

Result<std::string> BucketByName(Request& r, const std::string& name) {
  const bool ais = r.ctx.store.buckets().Get(name).has_value();
  const std::string aws_key = BucketKey(kProviderAws, name);
  const bool aws = r.ctx.store.buckets().Get(aws_key).has_value();
  if (ais && aws) {
    return r.Fail("AmbiguousBucketName", Status::BucketNotFound("ambiguous bucket name \"" + name + "\": matches ais://" +
                                                                name + ", s3://" + name));
  }
  if (!ais && !aws) return r.Fail("NoSuchBucket", Status::BucketNotFound("bucket \"" + name + "\" does not exist"));
  return ais ? name : aws_key;
}

std::optional<std::string_view> S3PathOf(const ServerContext& ctx, std::string_view raw_path) {
  if (raw_path == "/s3" || raw_path.starts_with("/s3/")) return raw_path.substr(3);
  if (raw_path == "/v1" || raw_path.starts_with("/v1/")) return std::nullopt;
  if (ctx.features.load(std::memory_order_relaxed) & kFeatS3ApiViaRoot) return raw_path;
  return std::nullopt;
}

bool Selector::Matches(const Exchange& ex) const {
  if (!query.empty() && !ex.query(query) && (or_query.empty() || !ex.query(or_query))) return false;
  return header.empty() || !ex.header(header).empty();
}

std::string Selector::Describe() const {
  std::string out;
  if (!query.empty()) out = "?" + std::string(query);
  if (!or_query.empty()) out += "|?" + std::string(or_query);
  if (!header.empty()) out += (out.empty() ? "" : " + ") + std::string(header);
  return out;
}

Target ParseTarget(std::string_view path) {
  Target t;
  if (path.starts_with('/')) path.remove_prefix(1);
  auto slash = path.find('/');
  auto bucket = PercentDecode(path.substr(0, slash), false);
  std::optional<std::string> key = std::string();
  if (slash != std::string_view::npos) key = PercentDecode(path.substr(slash + 1), false);
  if (!bucket || !key) {
    t.error = Status::InvalidArgument("malformed percent-encoding in the path");
    t.error_code = "InvalidURI";
    return t;
  }
  t.bucket_name = std::move(*bucket);
  t.key = CleanKey(*key);
  // "b/.." is no way to name the bucket: a key that cleans to nothing is refused, not taken for
  // a bucket request (DELETE /s3/b/.. must not delete the bucket).
  if (t.key.empty() && !key->empty() && *key != "/") {
    t.error = Status::InvalidArgument("invalid object key \"" + key->substr(0, 64) + "\"");
    t.error_code = "InvalidArgument";
  }
  return t;
}

Task<void> Serve(ServerContext& ctx, Exchange& ex, Target target, const Operation* op, auth::AccessAttrs bits,
                 std::string_view unmatched) {
  Request r(ctx, ex);
  r.request_id = RandomId(16);
  Handled h = co_await Route(r, target, op, bits, unmatched);
  if (h.replied()) co_return;
  if (ex.replied()) {  // a bug: an error after the reply began
    LogError(std::string(ex.raw_path()) + ": S3 error after the reply began: " + h.status().message());
    co_return;
  }
  S3Error e = ToS3Error(h.status(), r.scope, r.error_code);
  HeaderList headers = r.error_headers;
  headers.emplace_back("x-amz-request-id", r.request_id);
  headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (e.status == http::status::method_not_allowed) headers.emplace_back("Allow", "DELETE, GET, HEAD, POST, PUT");
  if (e.status >= http::status::internal_server_error) LogError("S3 " + std::string(ex.method_string()) + " " + std::string(ex.raw_path()) + ": " + e.message);
  std::string body = ErrorXml(e, ex.raw_path(), r.request_id);
  // Reply drops the body of a HEAD (S3: status only).
  (void)co_await ex.Reply(e.status, headers, std::move(body), "application/xml");
}

}  // namespace ais::s3
