// GetBatch request parsing (getbatch.md §2): keys, defaults, bucket resolution, validation.
#include "api/moss_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ais {
namespace {

const std::optional<MossBucket> kNoDefault;

MossRequest Parse(std::string_view body, const std::optional<MossBucket>& def = kNoDefault) {
  auto r = ParseMossRequest(body, def);
  EXPECT_TRUE(r.ok()) << body << ": " << r.status().message();
  return r.ok() ? std::move(*r) : MossRequest{};
}

std::string Error(std::string_view body, const std::optional<MossBucket>& def = kNoDefault) {
  auto r = ParseMossRequest(body, def);
  EXPECT_FALSE(r.ok()) << body;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << r.status().message();
  return r.status().message();
}

TEST(MossRequest, SdkBody) {
  auto req = Parse(
      R"({"in":[{"objname":"a.txt","bucket":"b","provider":"ais"},)"
      R"({"objname":"s.tar","bucket":"b","provider":"ais","opaque":"+/9pZA==","archpath":"x/y.jpg","length":-1}],)"
      R"("mime":".tar","coer":true,"onob":false,"strm":true})");
  EXPECT_EQ(req.mime, ".tar");
  EXPECT_TRUE(req.coer);
  EXPECT_FALSE(req.onob);
  EXPECT_TRUE(req.strm);
  ASSERT_EQ(req.items.size(), 2u);
  ASSERT_EQ(req.buckets.size(), 1u);
  EXPECT_EQ(req.buckets[0].Cname(), "ais://b");
  EXPECT_EQ(req.objname(req.items[0]), "a.txt");
  EXPECT_EQ(req.archpath(req.items[0]), "");
  EXPECT_EQ(req.objname(req.items[1]), "s.tar");
  EXPECT_EQ(req.archpath(req.items[1]), "x/y.jpg");
  EXPECT_EQ(req.opaque(req.items[1]), std::string("\xfb\xff\x69\x64", 4));
  EXPECT_EQ(req.items[1].start, 0);
  EXPECT_EQ(req.items[1].length, -1);
}

TEST(MossRequest, Defaults) {
  auto req = Parse(R"({"in":[{"objname":"o"}],"coloc":2})", MossBucket{"ais", "dflt"});
  EXPECT_EQ(req.mime, "");
  EXPECT_FALSE(req.coer);
  EXPECT_FALSE(req.strm);
  ASSERT_EQ(req.items.size(), 1u);
  EXPECT_EQ(req.bucket(req.items[0]).name, "dflt");
}

// A key AIS does not define, or a container where a scalar belongs, is an error naming it.
TEST(MossRequest, UnknownKeysAndMisplacedContainersAreErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"in":[{"objname":"o"}],"future":1})", "unknown field \"future\""},
      {R"({"in":[{"objname":"o"}],"future":[{"a":1}]})", "\"future\": unexpected object or array"},
      {R"({"in":[{"objname":"o","x":{"deep":[1]}}]})", "\"x\": unexpected object or array"},
      {R"({"in":[{"objname":"o","size":1}]})", "unknown field \"in[].size\""},
      {R"({"in":{"objname":"o"}})", "\"in\": unexpected object or array"},
      {R"({"in":[{"objname":["o"]}]})", "\"objname\": unexpected object or array"},
  };
  for (const auto& [body, needle] : cases) {
    auto req = ParseMossRequest(body, MossBucket{"ais", "b"});
    ASSERT_FALSE(req.ok()) << body;
    EXPECT_EQ(req.status().code(), Status::Code::kInvalidArgument) << body;
    EXPECT_NE(req.status().message().find(needle), std::string::npos) << body << " -> " << req.status().message();
  }
}

TEST(MossRequest, ItemLimit) {
  std::string body = R"({"in":[{"objname":"a"},{"objname":"b"},{"objname":"c"}]})";
  EXPECT_TRUE(ParseMossRequest(body, MossBucket{"ais", "b"}, 3).ok());
  auto over = ParseMossRequest(body, MossBucket{"ais", "b"}, 2);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("more than 2 items"), std::string::npos) << over.status().message();
}

TEST(MossRequest, KeysAreCaseInsensitive) {
  auto req = Parse(R"({"IN":[{"ObjName":"o","Bucket":"b"}],"Strm":true,"MIME":"zip"})");
  ASSERT_EQ(req.items.size(), 1u);
  EXPECT_TRUE(req.strm);
  EXPECT_EQ(req.mime, "zip");
}

TEST(MossRequest, BucketResolution) {
  auto req = Parse(R"({"in":[{"objname":"1"},{"objname":"2","bucket":"x"},{"objname":"3","bucket":"x","provider":"s3"},)"
                   R"({"objname":"4","uname":"ais/@#/y/"},{"objname":"5","bucket":"x","provider":"ais"}]})",
                   MossBucket{"ais", "d"});
  ASSERT_EQ(req.items.size(), 5u);
  EXPECT_EQ(req.bucket(req.items[0]).Cname(), "ais://d");
  EXPECT_EQ(req.bucket(req.items[1]).Cname(), "ais://x");
  EXPECT_EQ(req.bucket(req.items[2]).Cname(), "aws://x");
  EXPECT_EQ(req.bucket(req.items[3]).Cname(), "ais://y");
  EXPECT_EQ(req.items[1].bucket, req.items[4].bucket);
  EXPECT_EQ(req.buckets.size(), 4u);
}

TEST(MossRequest, DuplicatesAreKept) {
  auto req = Parse(R"({"in":[{"objname":"o","bucket":"b"},{"objname":"o","bucket":"b"}]})");
  EXPECT_EQ(req.items.size(), 2u);
}

TEST(MossRequest, Errors) {
  EXPECT_EQ(Error(R"({"in":[]})"), "moss: empty input");
  EXPECT_EQ(Error(R"({})"), "moss: empty input");
  EXPECT_EQ(Error(R"({"in":[{"objname":"o"}]})"), "missing bucket specification for object \"o\"");
  EXPECT_NE(Error(R"({"in":[{"objname":"","bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"a/../b","bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"a/","bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"~/a","bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b","archpath":"x/./y"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b","archpath":"x/"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"bad name"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b","provider":"nope"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b","opaque":"!!"}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":5,"bucket":"b"}]})"), "");
  EXPECT_NE(Error(R"({"in":{"objname":"o"}})"), "");
  EXPECT_NE(Error(R"({"in":[1]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b"}],"coer":"yes"})"), "");
  EXPECT_NE(Error(R"([{"objname":"o"}])"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"o","bucket":"b"}])"), "");
  EXPECT_NE(Error(""), "");
  EXPECT_NE(Error("not json"), "");
}

TEST(MossRequest, RangeRules) {
  auto req = Parse(R"({"in":[{"objname":"o","bucket":"b","start":5,"length":10},{"objname":"o","bucket":"b","start":5,"length":-1}]})");
  EXPECT_EQ(req.items[0].start, 5);
  EXPECT_EQ(req.items[0].length, 10);
  EXPECT_EQ(req.items[1].length, -1);
  EXPECT_EQ(Error(R"({"in":[{"objname":"x","bucket":"b","start":3}]})"),
            "not satisfiable range [start=3,length=0 (oname: \"x\")]");
  EXPECT_NE(Error(R"({"in":[{"objname":"x","bucket":"b","start":-1,"length":2}]})"), "");
  EXPECT_NE(Error(R"({"in":[{"objname":"x","bucket":"b","length":-2}]})"), "");
}

TEST(MossRequest, ArchpathMayStartWithSlash) {
  auto req = Parse(R"({"in":[{"objname":"s.tar","bucket":"b","archpath":"/x/y"}]})");
  EXPECT_EQ(req.archpath(req.items[0]), "/x/y");
}

}  // namespace
}  // namespace ais
