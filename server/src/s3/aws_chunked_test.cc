#include "s3/aws_chunked.h"

#include <gtest/gtest.h>

#include <string>

namespace ais::s3 {
namespace {

struct Decoded {
  Status st;
  std::string data;
  std::vector<std::pair<std::string, std::string>> trailers;
};

// Feeds `body` in pieces of `piece` bytes (every split point is exercised by the callers).
Decoded Decode(const std::string& body, size_t piece) {
  Decoded out;
  AwsChunkedDecoder d([&](const char* p, size_t n) {
    out.data.append(p, n);
    return Status::OK();
  });
  for (size_t i = 0; i < body.size() && out.st.ok(); i += piece) out.st = d.Feed(body.data() + i, std::min(piece, body.size() - i));
  if (out.st.ok()) out.st = d.Finish();
  out.trailers = d.trailers();
  return out;
}

const std::string kSigned =
    "5;chunk-signature=0123456789abcdef\r\nhello\r\n"
    "6;chunk-signature=fedcba9876543210\r\n world\r\n"
    "0;chunk-signature=00\r\n\r\n";
const std::string kUnsignedTrailer =
    "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\nx-amz-trailer-signature:abc\r\n\r\n";

TEST(AwsChunked, SignedEveryPieceSize) {
  for (size_t piece = 1; piece <= kSigned.size(); ++piece) {
    Decoded d = Decode(kSigned, piece);
    ASSERT_TRUE(d.st.ok()) << piece << ": " << d.st.message();
    EXPECT_EQ(d.data, "hello world");
    EXPECT_TRUE(d.trailers.empty());
  }
}

TEST(AwsChunked, TrailersEveryPieceSize) {
  for (size_t piece = 1; piece <= kUnsignedTrailer.size(); ++piece) {
    Decoded d = Decode(kUnsignedTrailer, piece);
    ASSERT_TRUE(d.st.ok()) << piece << ": " << d.st.message();
    EXPECT_EQ(d.data, "hello world");
    ASSERT_EQ(d.trailers.size(), 2u);
    EXPECT_EQ(d.trailers[0].first, "x-amz-checksum-crc32");
    EXPECT_EQ(d.trailers[0].second, "DUoRhQ==");
  }
}

TEST(AwsChunked, TrailerWithoutFinalEmptyLine) {
  Decoded d = Decode("3\r\nabc\r\n0\r\nX-Amz-Checksum-Crc32: AAAAAA== \r\n", 7);
  ASSERT_TRUE(d.st.ok()) << d.st.message();
  EXPECT_EQ(d.data, "abc");
  ASSERT_EQ(d.trailers.size(), 1u);
  EXPECT_EQ(d.trailers[0].first, "x-amz-checksum-crc32");  // lower-cased, value trimmed
  EXPECT_EQ(d.trailers[0].second, "AAAAAA==");
}

TEST(AwsChunked, Empty) {
  Decoded d = Decode("0\r\n\r\n", 1);
  ASSERT_TRUE(d.st.ok());
  EXPECT_EQ(d.data, "");
}

TEST(AwsChunked, MalformedIsAnErrorNeverACrash) {
  const char* bad[] = {
      "",                                   // no last chunk
      "5\r\nhel",                            // truncated data
      "5\r\nhello",                          // missing CRLF after data (end)
      "5\r\nhelloXY0\r\n\r\n",               // wrong bytes after data
      "g\r\n",                               // bad hex
      "\r\n",                                // empty size
      ";x\r\n",                              // extension without size
      "12345678901234567\r\n",               // more than 16 digits
      "140000001\r\n",                       // over 5 GiB
      "5\rxhello\r\n0\r\n\r\n",              // CR without LF
      "0\r\n\r\nextra",                      // data after the end
      "0\r\nno-colon\r\n\r\n",               // malformed trailer
      "0\r\n:value\r\n\r\n",                 // empty trailer name
  };
  for (const char* b : bad) {
    Decoded d = Decode(b, 3);
    EXPECT_FALSE(d.st.ok()) << "accepted: " << b;
    EXPECT_EQ(d.st.code(), Status::Code::kInvalidArgument) << b;
  }
}

TEST(AwsChunked, LimitsOnLinesAndTrailers) {
  std::string long_ext = "1;" + std::string(AwsChunkedDecoder::kMaxLine, 'x') + "\r\na\r\n0\r\n\r\n";
  EXPECT_FALSE(Decode(long_ext, 1000).st.ok());
  std::string many = "0\r\n";
  while (many.size() < AwsChunkedDecoder::kMaxTrailers + 100) many += "x-a:b\r\n";  // bytes counted with CRLFs
  many += "\r\n";
  EXPECT_FALSE(Decode(many, 512).st.ok());
}

TEST(AwsChunked, SinkErrorStops) {
  AwsChunkedDecoder d([](const char*, size_t) { return Status::NoSpace("full"); });
  Status st = d.Feed(kSigned.data(), kSigned.size());
  EXPECT_EQ(st.code(), Status::Code::kNoSpace);
}

}  // namespace
}  // namespace ais::s3
