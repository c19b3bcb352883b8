#include "s3/body.h"

#include <memory>

#include "util/base64.h"
#include "s3/aws_chunked.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

// The payload hash that decides how the body is read: the one the signature covers when the
// request is signed (a presigned URL's may be in its query), else the header.
std::string_view PayloadHash(const Request& r) {
  return r.sigv4 ? std::string_view(r.sigv4->payload_hash) : r.ex.header("x-amz-content-sha256");
}

// Whether the body is aws-chunked. Decided by the payload hash alone when there is one: an
// unsigned Content-Encoding added to a replayed signed request must not turn a body checked
// against its signed hash into a chunked one that is not.
bool IsAwsChunked(const Request& r) {
  std::string_view hash = PayloadHash(r);
  if (!hash.empty()) return hash.starts_with("STREAMING-");
  return r.ex.header("Content-Encoding").find("aws-chunked") != std::string_view::npos;
}

bool IsHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The checksum algorithm the client announced: a header x-amz-checksum-<algo> with its value,
// or a trailer it will send (x-amz-trailer), or x-amz-sdk-checksum-algorithm alone.
struct Announced {
  std::optional<ChecksumAlgo> algo;
  std::string header_value;  // empty: the value comes in a trailer (or not at all)
  bool trailer = false;
};

Result<Announced> AnnouncedChecksum(const Exchange& ex) {
  Announced a;
  for (const auto& [name, value] : ex.headers_with_prefix("x-amz-checksum-")) {
    auto algo = ParseChecksumAlgo(name);
    if (!algo) {
      if (IEquals(name, "x-amz-checksum-mode") || IEquals(name, "x-amz-checksum-type")) continue;
      return Status::InvalidArgument("unsupported checksum header " + std::string(name.substr(0, 64)));
    }
    if (a.algo && *a.algo != *algo) return Status::InvalidArgument("expecting a single checksum header, got several");
    a.algo = algo;
    a.header_value = std::string(value);
  }
  if (std::string_view t = ex.header("x-amz-trailer"); !t.empty()) {
    auto algo = ParseChecksumAlgo(t);
    if (!algo) return Status::InvalidArgument("unsupported trailer \"" + std::string(t.substr(0, 64)) + "\"");
    if (a.algo && *a.algo != *algo) return Status::InvalidArgument("checksum header and trailer disagree");
    a.algo = algo;
    a.trailer = true;
  }
  if (!a.algo) {
    if (std::string_view sdk = ex.header("x-amz-sdk-checksum-algorithm"); !sdk.empty()) {
      a.algo = ParseChecksumAlgo(sdk);
      if (!a.algo) return Status::InvalidArgument("unsupported x-amz-sdk-checksum-algorithm \"" + std::string(sdk.substr(0, 32)) + "\"");
    }
  }
  return a;
}

}  // namespace

Result<std::optional<uint64_t>> BodySize(const Request& r) {
  const Exchange& ex = r.ex;
  if (IsAwsChunked(r)) {
    std::string_view d = ex.header("x-amz-decoded-content-length");
    if (d.empty()) return std::optional<uint64_t>();
    auto n = ParseUint(d);
    if (!n) return Status::InvalidArgument("invalid x-amz-decoded-content-length \"" + std::string(d.substr(0, 32)) + "\"");
    return std::optional<uint64_t>(*n);
  }
  return ex.content_length();
}

Task<Result<ReceivedBody>> ReceiveBody(Request& r, const std::function<Status(const char*, size_t)>& sink) {
  Exchange& ex = r.ex;
  auto announced = AnnouncedChecksum(ex);
  if (!announced.ok()) co_return r.Fail("InvalidRequest", announced.status());
  std::optional<std::string> content_md5;
  if (std::string_view cm = ex.header("Content-MD5"); !cm.empty()) {
    content_md5 = DecodeBase64(cm);
    if (!content_md5 || content_md5->size() != 16) {
      co_return r.Fail("InvalidDigest", Status::InvalidArgument("the Content-MD5 you specified is not valid"));
    }
  }
  const std::string_view content_sha = PayloadHash(r);
  const bool chunked = IsAwsChunked(r);
  std::unique_ptr<BodyHasher> md5 = BodyHasher::Md5();
  std::unique_ptr<BodyHasher> cksum = announced->algo ? BodyHasher::Create(*announced->algo) : nullptr;
  std::unique_ptr<BodyHasher> sha = !chunked && IsHex64(content_sha) ? BodyHasher::Create(ChecksumAlgo::kSha256) : nullptr;
  uint64_t size = 0;
  std::function<Status(const char*, size_t)> hashed = [&](const char* p, size_t n) -> Status {
    md5->Update(p, n);
    if (cksum) cksum->Update(p, n);
    if (sha) sha->Update(p, n);
    size += n;
    return sink(p, n);
  };
  std::unique_ptr<AwsChunkedDecoder> decoder;
  Status st;
  std::optional<ChunkSignatures> chunk_sigs;
  if (chunked) {
    decoder = std::make_unique<AwsChunkedDecoder>(hashed);
    // Signed chunks of a verified request: each chunk's signature chains from the request's.
    if (r.sigv4 && content_sha.starts_with("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")) {
      chunk_sigs.emplace(*r.sigv4);
      decoder->VerifyChunks(&*chunk_sigs, content_sha.ends_with("-TRAILER"));
    }
    std::function<Status(const char*, size_t)> decode = [&](const char* p, size_t n) { return decoder->Feed(p, n); };
    st = co_await ex.StreamBody(decode);
    if (st.ok()) st = decoder->Finish();
    if (!st.ok() && st.message().starts_with("aws-chunked")) {
      if (st.code() == Status::Code::kInvalidArgument) co_return r.Fail("IncompleteBody", st);
      if (st.code() == Status::Code::kForbidden) co_return r.Fail("SignatureDoesNotMatch", st);
    }
  } else {
    st = co_await ex.StreamBody(hashed);
  }
  if (!st.ok()) co_return st;
  if (chunked) {
    std::string_view d = ex.header("x-amz-decoded-content-length");
    if (!d.empty() && ParseUint(d) != size) {
      co_return r.Fail("IncompleteBody", Status::InvalidArgument("x-amz-decoded-content-length " + std::string(d) +
                                                                 " does not match the " + std::to_string(size) +
                                                                 " bytes decoded"));
    }
  }
  ReceivedBody out;
  out.size = size;
  std::string md5_raw = md5->Finish();
  out.md5_hex = HexOf(md5_raw);
  if (content_md5 && *content_md5 != md5_raw) {
    co_return r.Fail("BadDigest", Status::InvalidArgument("the Content-MD5 you specified did not match what we received"));
  }
  if (sha && HexOf(sha->Finish()) != content_sha) {
    co_return r.Fail("XAmzContentSHA256Mismatch",
                     Status::InvalidArgument("the provided x-amz-content-sha256 does not match what was computed"));
  }
  if (cksum) {
    std::string expected = announced->header_value;
    if (announced->trailer && decoder) {
      const std::string* t = decoder->trailer("x-amz-checksum-" + std::string(ChecksumName(*announced->algo)));
      if (t) expected = *t;
    }
    std::string got = EncodeBase64(cksum->Finish());
    if (!expected.empty()) {
      if (expected != got) {
        co_return r.Fail("BadDigest", Status::InvalidArgument("the " + std::string(ChecksumName(*announced->algo)) +
                                                              " you specified did not match the calculated checksum"));
      }
      out.algo = announced->algo;
      out.checksum = std::move(got);
    }
  }
  co_return out;
}

}  // namespace ais::s3
