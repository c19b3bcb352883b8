#include "s3/xml.h"

#include <gtest/gtest.h>

#include "s3/errors.h"

namespace ais::s3 {
namespace {

TEST(S3Xml, ErrorDocument) {
  S3Error e = ToS3Error(Status::NotFound("ais://b/k does not exist"), Scope::kObject);
  EXPECT_EQ(e.status, http::status::not_found);
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(ErrorXml(e, "/s3/b/k", "RID"),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code>"
            "<Message>ais://b/k does not exist</Message><Resource>/s3/b/k</Resource><RequestId>RID</RequestId></Error>");
}

TEST(S3Xml, ErrorCodesByKindAndScope) {
  EXPECT_EQ(ToS3Error(Status::NotFound("x"), Scope::kUpload).code, "NoSuchUpload");
  EXPECT_EQ(ToS3Error(Status::BucketNotFound("x"), Scope::kObject).code, "NoSuchBucket");
  EXPECT_EQ(ToS3Error(Status::RangeNotSatisfiable("x"), Scope::kObject).status, http::status::range_not_satisfiable);
  EXPECT_EQ(ToS3Error(Status::RangeNotSatisfiable("x"), Scope::kObject).code, "InvalidRange");
  EXPECT_EQ(ToS3Error(Status::PreconditionFailed("x"), Scope::kObject).code, "PreconditionFailed");
  EXPECT_EQ(ToS3Error(Status::AlreadyExists("x"), Scope::kBucket).code, "BucketAlreadyExists");
  EXPECT_EQ(ToS3Error(Status::NotSupported("x"), Scope::kBucket).code, "NotImplemented");
  S3Error named = ToS3Error(Status::InvalidArgument("x"), Scope::kObject, "MalformedXML");
  EXPECT_EQ(named.code, "MalformedXML");
  EXPECT_EQ(named.status, http::status::bad_request);
}

TEST(S3Xml, EscapesText) {
  XmlDoc doc("R", false);
  AddText(doc.root(), "Key", "a<b>&\"c\"");
  EXPECT_EQ(doc.Text(), "<?xml version=\"1.0\" encoding=\"UTF-8\"?><R><Key>a&lt;b&gt;&amp;\"c\"</Key></R>");
}

TEST(S3Xml, ListResultV2AndV1) {
  ListResult r;
  r.bucket = "b";
  r.prefix = "p/";
  r.delimiter = "/";
  r.max_keys = 2;
  r.truncated = true;
  r.next_continuation_token = "tok";
  r.objects.push_back(ListedObject{.key = "p/a b", .last_modified_ns = 1700000000123000000, .etag = "\"e\"", .size = 5});
  r.common_prefixes.push_back("p/d/");
  std::string v2 = ListResultXml(r);
  EXPECT_NE(v2.find("<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"), std::string::npos);
  EXPECT_NE(v2.find("<NextContinuationToken>tok</NextContinuationToken>"), std::string::npos);
  EXPECT_NE(v2.find("<KeyCount>2</KeyCount>"), std::string::npos);
  EXPECT_NE(v2.find("<Key>p/a b</Key><LastModified>2023-11-14T22:13:20.123Z</LastModified>"), std::string::npos);
  EXPECT_NE(v2.find("<CommonPrefixes><Prefix>p/d/</Prefix></CommonPrefixes>"), std::string::npos);
  EXPECT_EQ(v2.find("<Owner>"), std::string::npos);  // V2: only with fetch-owner
  r.v2 = false;
  r.url_encoding = true;
  r.next_marker = "p/a b";
  std::string v1 = ListResultXml(r);
  EXPECT_NE(v1.find("<NextMarker>p/a%20b</NextMarker>"), std::string::npos);
  EXPECT_NE(v1.find("<Key>p/a%20b</Key>"), std::string::npos);
  EXPECT_NE(v1.find("<Owner>"), std::string::npos);
  EXPECT_NE(v1.find("<EncodingType>url</EncodingType>"), std::string::npos);
}

TEST(S3Xml, Iso8601) {
  EXPECT_EQ(Iso8601(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(Iso8601(951782400999000000), "2000-02-29T00:00:00.999Z");  // a leap day
  EXPECT_EQ(Iso8601(1700000000123000000), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(Iso8601(4102444799000000000), "2099-12-31T23:59:59.000Z");
  EXPECT_EQ(Iso8601(-5), "1970-01-01T00:00:00.000Z");
}

TEST(S3Xml, UrlEncodeKey) {
  EXPECT_EQ(UrlEncodeKey("a/b c+d%é"), "a/b%20c%2Bd%25%C3%A9");
  EXPECT_EQ(UrlEncodeKey("A-z_0.9~"), "A-z_0.9~");
}

TEST(S3Xml, ParseDelete) {
  auto d = ParseDeleteRequest(
      "<?xml version=\"1.0\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
      "<Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>1</VersionId></Object></Delete>");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->quiet);
  EXPECT_EQ(d->keys, (std::vector<std::string>{"a&b", "c"}));
}

TEST(S3Xml, ParseComplete) {
  auto c = ParseCompleteRequest(
      "<CompleteMultipartUpload><Part><ETag>\"e1\"</ETag><PartNumber>1</PartNumber></Part>"
      "<Part><PartNumber>2</PartNumber><ETag>e2</ETag><ChecksumCRC32>x</ChecksumCRC32></Part></CompleteMultipartUpload>",
      10);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0].number, 1u);
  EXPECT_EQ((*c)[0].etag, "e1");
  EXPECT_EQ((*c)[1].etag, "e2");
}

TEST(S3Xml, MalformedBodiesAreErrors) {
  const char* bad_delete[] = {"", "<Delete>", "not xml", "<Other/>", "<Delete></Delete>", "<Delete><Object/></Delete>"};
  for (const char* b : bad_delete) EXPECT_FALSE(ParseDeleteRequest(b).ok()) << b;
  // A DTD's entities are never expanded (no XXE, no billion laughs): the reference stays text.
  auto dtd = ParseDeleteRequest("<!DOCTYPE x [<!ENTITY a \"b\">]><Delete><Object><Key>&a;</Key></Object></Delete>");
  ASSERT_TRUE(dtd.ok());
  EXPECT_EQ(dtd->keys.front(), "&a;");
  std::string many = "<Delete>";
  for (int i = 0; i <= 1000; ++i) many += "<Object><Key>k</Key></Object>";
  EXPECT_FALSE(ParseDeleteRequest(many + "</Delete>").ok());
  const char* bad_complete[] = {"<CompleteMultipartUpload/>",
                                "<CompleteMultipartUpload><Part><PartNumber>0</PartNumber></Part></CompleteMultipartUpload>",
                                "<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber></Part></CompleteMultipartUpload>",
                                "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber></Part></CompleteMultipartUpload>",
                                "<CompleteMultipartUpload><Part><PartNumber>99999999999</PartNumber></Part></CompleteMultipartUpload>",
                                "<CompleteMultipartUpload><Part></Part></CompleteMultipartUpload>",
                                "<X><Part><PartNumber>1</PartNumber></Part></X>"};
  for (const char* b : bad_complete) EXPECT_FALSE(ParseCompleteRequest(b, 10).ok()) << b;
  std::string parts = "<CompleteMultipartUpload>";
  for (int i = 1; i <= 3; ++i) parts += "<Part><PartNumber>" + std::to_string(i) + "</PartNumber></Part>";
  EXPECT_FALSE(ParseCompleteRequest(parts + "</CompleteMultipartUpload>", 2).ok());
  EXPECT_FALSE(ParseVersioningRequest("<VersioningConfiguration><Status>On</Status></VersioningConfiguration>").ok());
  auto v = ParseVersioningRequest("<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "Suspended");
}

}  // namespace
}  // namespace ais::s3
