#include "download/link_fetch.h"

#include <gtest/gtest.h>

#include <map>

namespace ais {
namespace {

std::vector<std::pair<std::string, std::string>> Md(const std::string& link,
                                                    std::map<std::string, std::string> headers = {}) {
  return SourceMetadata(link, [&](std::string_view k) {
    auto it = headers.find(std::string(k));
    return it == headers.end() ? std::string() : it->second;
  });
}

TEST(LinkFetchTest, SourceByHostAsAisRecordsIt) {
  using MdList = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Md("http://127.0.0.1:8000/x"), (MdList{{"source", "web"}}));
  EXPECT_EQ(Md("https://example.com/amazonaws.com/x"), (MdList{{"source", "web"}}));  // the host decides
  EXPECT_EQ(Md("https://b.s3.us-east-1.amazonaws.com/o", {{"ETag", "\"abc\""}, {"x-amz-version-id", "v1"}}),
            (MdList{{"source", "aws"}, {"version", "v1"}, {"ETag", "abc"}}));
  EXPECT_EQ(Md("http://s3.amazonaws.com/b/o"), (MdList{{"source", "aws"}}));
  EXPECT_EQ(Md("https://storage.googleapis.com/b/o", {{"x-goog-generation", "17"}}),
            (MdList{{"source", "gcp"}, {"version", "17"}}));
  EXPECT_EQ(Md("https://acct.blob.core.windows.net/c/o"), (MdList{{"source", "azure"}}));
  EXPECT_EQ(Md("https://user@STORAGE.googleapis.com:443/b/o"), (MdList{{"source", "gcp"}}));
}

}  // namespace
}  // namespace ais
