#include "s3/sigv4.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "s3/aws_chunked.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

// The examples of AWS's SigV4 documentation for S3 ("Signature Calculations for the
// Authorization Header" and "... Query Parameters"): their key, their time, their signatures. A
// pass means the canonical request is built as the real service builds it.
const AccessKeys kKeys = {{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}};
constexpr std::string_view kEmptySha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::chrono::system_clock::time_point At(int64_t unix_seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(unix_seconds));
}
constexpr int64_t k20130524 = 1369353600;  // 2013-05-24T00:00:00Z

struct Fake {
  std::string method = "GET";
  std::string path;
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::system_clock::time_point now = At(k20130524);

  SignedRequest View() const {
    return SignedRequest{.method = method,
                         .raw_path = path,
                         .raw_query = query,
                         .header_values =
                             [this](std::string_view name) {
                               std::vector<std::string_view> out;
                               for (const auto& [k, v] : headers) {
                                 if (IEquals(k, name)) out.push_back(v);
                               }
                               return out;
                             },
                         .now = now};
  }
  void Set(const std::string& name, const std::string& value) {
    for (auto& [k, v] : headers) {
      if (IEquals(k, name)) {
        v = value;
        return;
      }
    }
    headers.emplace_back(name, value);
  }
};

Fake GetObjectExample() {
  Fake f;
  f.path = "/test.txt";
  f.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
               {"Range", "bytes=0-9"},
               {"x-amz-content-sha256", std::string(kEmptySha)},
               {"x-amz-date", "20130524T000000Z"},
               {"Authorization",
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"}};
  return f;
}

Fake PresignedExample() {
  Fake f;
  f.path = "/test.txt";
  f.query =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_"
      "request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
  f.headers = {{"Host", "examplebucket.s3.amazonaws.com"}};
  return f;
}

std::string StreamingBody(bool corrupt) {
  std::string body;
  const std::pair<size_t, const char*> chunks[] = {
      {65536, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"},
      {1024, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"},
      {0, "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"}};
  for (const auto& [size, sig] : chunks) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%zx", size);
    std::string data(size, 'a');
    if (corrupt && size == 1024) data[10] = 'b';
    body += std::string(hex) + ";chunk-signature=" + sig + "\r\n" + data + "\r\n";
  }
  return body;
}

Fake StreamingExample() {
  Fake f;
  f.method = "PUT";
  f.path = "/examplebucket/chunkObject.txt";
  f.headers = {{"Host", "s3.amazonaws.com"},
               {"x-amz-date", "20130524T000000Z"},
               {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
               {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
               {"Content-Encoding", "aws-chunked"},
               {"x-amz-decoded-content-length", "66560"},
               {"Content-Length", "66824"},
               {"Authorization",
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
                "x-amz-decoded-content-length;x-amz-storage-class,"
                "Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"}};
  return f;
}

std::string Code(const Fake& f, const AccessKeys& keys = kKeys) {
  SigV4Failure failure;
  auto got = VerifySigV4(f.View(), keys, &failure);
  return got.ok() ? "OK" : failure.code;
}

TEST(SigV4, AwsGetObjectExample) {
  Fake f = GetObjectExample();
  EXPECT_TRUE(HasSigV4(f.View()));
  SigV4Failure failure;
  auto got = VerifySigV4(f.View(), kKeys, &failure);
  ASSERT_TRUE(got.ok()) << failure.code << ": " << got.status().message();
  EXPECT_EQ(got->access_key, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(got->scope, "20130524/us-east-1/s3/aws4_request");
}

TEST(SigV4, AwsPresignedExample) {
  Fake f = PresignedExample();
  EXPECT_TRUE(HasSigV4(f.View()));
  EXPECT_EQ(Code(f), "OK");
  f.now = At(k20130524 + 86400 + 1);
  EXPECT_EQ(Code(f), "AccessDenied");  // expired
  f = PresignedExample();
  f.query += "&extra=1";  // a parameter the signature does not cover
  EXPECT_EQ(Code(f), "SignatureDoesNotMatch");
}

TEST(SigV4, RefusalsNameTheirS3Codes) {
  Fake f = GetObjectExample();
  f.Set("Range", "bytes=0-10");
  EXPECT_EQ(Code(f), "SignatureDoesNotMatch");
  f = GetObjectExample();
  f.path = "/other.txt";
  EXPECT_EQ(Code(f), "SignatureDoesNotMatch");
  f = GetObjectExample();
  f.method = "DELETE";
  EXPECT_EQ(Code(f), "SignatureDoesNotMatch");
  EXPECT_EQ(Code(GetObjectExample(), {{"AKIAIOSFODNN7EXAMPLE", "another secret"}}), "SignatureDoesNotMatch");
  EXPECT_EQ(Code(GetObjectExample(), {{"SOMEONE-ELSE", "x"}}), "InvalidAccessKeyId");
  f = GetObjectExample();
  f.now = At(k20130524 + 16 * 60);
  EXPECT_EQ(Code(f), "RequestTimeTooSkewed");
  f.now = At(k20130524 + 14 * 60);
  EXPECT_EQ(Code(f), "OK");
  f = GetObjectExample();
  f.headers.erase(f.headers.begin() + 4);  // no Authorization, no query signature
  EXPECT_FALSE(HasSigV4(f.View()));
  EXPECT_EQ(Code(f), "AccessDenied");
  f = GetObjectExample();
  f.headers.erase(f.headers.begin() + 2);  // x-amz-content-sha256
  EXPECT_EQ(Code(f), "InvalidRequest");
  for (const char* bad : {"AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=x", "AWS4-HMAC-SHA1 Credential=a/b/c/d/e",
                          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/2013/us-east-1/s3/aws4_request,"
                          "SignedHeaders=host,Signature=00",
                          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                          "SignedHeaders=range,Signature=00",  // host unsigned
                          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130525/us-east-1/s3/aws4_request,"
                          "SignedHeaders=host,Signature=00"}) {  // not the x-amz-date's day
    f = GetObjectExample();
    f.Set("Authorization", bad);
    EXPECT_EQ(Code(f), "AuthorizationHeaderMalformed") << bad;
  }
}

struct ChunkRun {
  Status st;
  std::string data;
};

ChunkRun DecodeSigned(const std::string& body, size_t piece) {
  Fake f = StreamingExample();
  SigV4Failure failure;
  auto ctx = VerifySigV4(f.View(), kKeys, &failure);
  if (!ctx.ok()) return {ctx.status(), ""};
  ChunkSignatures sigs(*ctx);
  ChunkRun run;
  AwsChunkedDecoder d([&](const char* p, size_t n) {
    run.data.append(p, n);
    return Status::OK();
  });
  d.VerifyChunks(&sigs, false);
  for (size_t i = 0; i < body.size() && run.st.ok(); i += piece) run.st = d.Feed(body.data() + i, std::min(piece, body.size() - i));
  if (run.st.ok()) run.st = d.Finish();
  return run;
}

TEST(SigV4, AwsStreamingExampleChunkSignatures) {
  const std::string body = StreamingBody(false);
  ASSERT_EQ(body.size(), 66824u);  // the example's Content-Length
  for (size_t piece : {size_t{1} << 20, size_t{4096}, size_t{7}}) {
    ChunkRun run = DecodeSigned(body, piece);
    ASSERT_TRUE(run.st.ok()) << piece << ": " << run.st.message();
    EXPECT_EQ(run.data, std::string(66560, 'a'));
  }
  ChunkRun corrupt = DecodeSigned(StreamingBody(true), 4096);
  EXPECT_EQ(corrupt.st.code(), Status::Code::kForbidden) << corrupt.st.message();
  // Chunks in another order, or one left out, break the chain.
  std::string no_sig = body;
  no_sig.replace(no_sig.find(";chunk-signature="), 81, "");
  EXPECT_EQ(DecodeSigned(no_sig, 4096).st.code(), Status::Code::kForbidden);
  std::string last_only = body.substr(body.rfind("0;chunk-signature="));
  EXPECT_EQ(DecodeSigned(last_only, 4096).st.code(), Status::Code::kForbidden);
}

TEST(SigV4, CredentialsFile) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/creds-good", half = dir + "/creds-half", none = dir + "/creds-none";
  std::ofstream(good) << "[default]\naws_access_key_id = AK1\naws_secret_access_key = s1\n\n[other]\n"
                         "aws_access_key_id=AK2\naws_secret_access_key=s2\nregion=us-west-2\n";
  std::ofstream(half) << "[default]\naws_access_key_id = AK1\n";
  std::ofstream(none) << "[default]\nregion = us-east-1\n";
  auto keys = LoadAccessKeys(good);
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(*keys, (AccessKeys{{"AK1", "s1"}, {"AK2", "s2"}}));
  for (const std::string& path : {half, none, dir + "/creds-missing"}) {
    auto bad = LoadAccessKeys(path);
    ASSERT_FALSE(bad.ok()) << path;
    EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace ais::s3
