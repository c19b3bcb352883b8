#include "download/download_request.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

Result<DownloadRequest> Parse(const char* text) { return ParseDownloadRequest(nlohmann::json::parse(text)); }

std::string Error(const char* text) {
  auto r = Parse(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(DownloadRequestTest, Single) {
  auto r = Parse(R"({"type":"single","bucket":{"name":"b","provider":"ais"},"link":"https://h/d/x.tar?sig=1",
                     "timeout":"30s","limits":{"connections":2,"bytes_per_hour":3600},"description":"d"})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->type, DownloadType::kSingle);
  ASSERT_EQ(r->items.size(), 1u);
  EXPECT_EQ(r->items[0].name, "x.tar");  // the last path element, query dropped
  EXPECT_EQ(r->items[0].link, "https://h/d/x.tar?sig=1");
  EXPECT_EQ(r->timeout.count(), 30000);
  EXPECT_EQ(r->connections, 2);
  EXPECT_EQ(r->bytes_per_hour, 3600);
  EXPECT_EQ(r->Total(), 1);

  auto named = Parse(R"({"type":"single","bucket":{"name":"b"},"link":"h.example/a%20b","object_name":"dir/o%2B1"})");
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->items[0].name, "dir/o+1");                 // percent-decoded
  EXPECT_EQ(named->items[0].link, "http://h.example/a%20b");  // a scheme added
  EXPECT_EQ(named->DefaultDescription("ais://b"), "http://h.example/a%20b -> ais://b/dir/o+1");
}

TEST(DownloadRequestTest, MultiAsMapOrList) {
  auto m = Parse(R"({"type":"multi","bucket":{"name":"b"},"objects":{"o1":"http://h/1","d/o2":"http://h/2"}})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->items.size(), 2u);
  EXPECT_EQ(m->DefaultDescription("ais://b"), "multi-download -> ais://b");
  auto l = Parse(R"({"type":"multi","bucket":{"name":"b"},"objects":["http://h/a/1.bin","http://h/2.bin?x"]})");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->items[0].name, "1.bin");
  EXPECT_EQ(l->items[1].name, "2.bin");
  EXPECT_EQ(Error(R"({"type":"multi","bucket":{"name":"b"},"objects":7})"),
            "JSON body should be map (string -> string) or array of strings, found: float64");
  EXPECT_EQ(Error(R"({"type":"multi","bucket":{"name":"b"}})"), "body should not be empty");
  EXPECT_EQ(Error(R"({"type":"multi","bucket":{"name":"b"},"objects":[]})"), "body should not be empty");
}

TEST(DownloadRequestTest, Range) {
  auto r = Parse(R"({"type":"range","bucket":{"name":"b"},"template":"http://h/s-{0001..0010}.tar","subdir":"d/"})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->Total(), 10);
  EXPECT_EQ(r->subdir, "d");
  EXPECT_EQ(r->DefaultDescription("ais://b"), "http://h/s-{0001..0010}.tar -> ais://b");
  EXPECT_EQ(Error(R"({"type":"range","bucket":{"name":"b"}})"), "missing 'template' in the request body");
  EXPECT_NE(Error(R"({"type":"range","bucket":{"name":"b"},"template":"http://h/x"})").find("names no range"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type":"range","bucket":{"name":"b"},"template":"http://h/{0..99999999}"})").find("more than"),
            std::string::npos);
}

TEST(DownloadRequestTest, Backend) {
  auto r = Parse(R"({"type":"backend","bucket":{"name":"b","provider":"aws"},"prefix":"p/","suffix":".tar","synchronize":true})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->sync);
  EXPECT_EQ(r->Total(), -1);
}

TEST(DownloadRequestTest, RefusedAsAisWordsThem) {
  EXPECT_EQ(Error(R"({"bucket":{"name":"b"}})"), "'type' field is empty");
  EXPECT_EQ(Error(R"({"type":"torrent","bucket":{"name":"b"}})"),
            "input does not match any of the supported formats (single, range, multi, backend)");
  EXPECT_EQ(Error(R"({"type":"single","link":"http://h/x"})"), "missing 'bucket.name'");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"}})"), "missing 'link' in the request body");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/"})").substr(0, 47),
            "can not extract a valid 'object_name' from the ");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","limits":{"connections":-1}})"),
            "'limit.connections' must be non-negative (got: -1)");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","limits":{"bytes_per_hour":-5}})"),
            "'limit.bytes_per_hour' must be non-negative (got: -5)");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","timeout":"soon"})")
                .substr(0, 29),
            "failed to parse timeout field");
  EXPECT_EQ(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","progress_interval":"x"})"),
            "invalid progress interval \"x\"");
  // A field of another type, or none of AIS's, is refused, never ignored.
  EXPECT_NE(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","template":"t"})").find("template"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","blob_threshold":1})")
                .find("blob_threshold"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","headers":{"A":"v"}})").find("headers"),
            std::string::npos);
  auto backend_etl = Parse(R"({"type":"backend","bucket":{"name":"b","provider":"aws"},"etl_name":"md5"})");
  ASSERT_FALSE(backend_etl.ok());
  EXPECT_EQ(backend_etl.status().code(), Status::Code::kNotSupported);
  EXPECT_NE(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","etl_args":"a"})").find("etl_args"),
            std::string::npos);
}

TEST(DownloadRequestTest, ThroughAnEtl) {
  auto r = Parse(R"({"type":"multi","bucket":{"name":"b"},"objects":["http://h/x"],"etl_name":"md5","etl_args":"k=v"})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->etl_name, "md5");
  EXPECT_EQ(r->etl_args, "k=v");
}

TEST(DownloadRequestTest, Headers) {
  auto r = Parse(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","headers":{"Authorization":["Bearer t"],"X-A":["1","2"]}})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->headers.size(), 3u);
  EXPECT_EQ(r->headers[0].first, "Authorization");
  EXPECT_NE(Error(R"({"type":"single","bucket":{"name":"b"},"link":"http://h/x","headers":{"X":["a\r\nB: c"]}})")
                .find("line break"),
            std::string::npos);
}

TEST(DownloadRequestTest, Admin) {
  auto all = ParseAdminRequest(nlohmann::json::object(), false);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->id.empty());
  auto none = ParseAdminRequest(nlohmann::json::object(), true);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "UUID not specified");
  auto both = ParseAdminRequest(nlohmann::json{{"id", "dnl-1"}, {"regex", "x"}}, false);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(),
            "regex \"x\" and job ID \"dnl-1\" cannot be defined together (choose one or the other)");
  EXPECT_FALSE(ParseAdminRequest(nlohmann::json{{"regex", "(a"}}, false).ok());
  auto active = ParseAdminRequest(nlohmann::json{{"id", "dnl-1"}, {"only_active_tasks", true}}, true);
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->only_active);
}

TEST(DownloadRequestTest, ObjectNames) {
  EXPECT_EQ(*ObjectNameOfLink("https://h/a/b/c.tar"), "c.tar");
  EXPECT_EQ(*ObjectNameOfLink("https://h/a/b/c%20d.tar?x=1#f"), "c d.tar");
  EXPECT_EQ(*ObjectNameOfLink("h/a/"), "a");
  EXPECT_FALSE(ObjectNameOfLink("https://h").ok());
  EXPECT_FALSE(ObjectNameOfLink("https://h/..").ok());
  EXPECT_EQ(NormalizeLink("h:8080/x"), "http://h:8080/x");
  EXPECT_EQ(NormalizeLink("https://h/x"), "https://h/x");
}

}  // namespace
}  // namespace ais
