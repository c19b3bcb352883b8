// Azure Blob: the environment's say (account, key, endpoint), Shared Key's string-to-sign and
// signature, and what is kept of a blob (properties headers, List Blobs XML, block IDs).
#include "remote/azure_auth.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "remote/azure_client.h"

namespace ais {
namespace {

// Azurite's well-known development key (public: Azure's docs print it).
constexpr const char* kDevKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
constexpr const char* kDate = "x-ms-date: Sun, 29 Nov 2026 07:00:00 GMT";

AzureGetEnv EnvOf(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

TEST(AzureAuthTest, NeitherAccountNorKeyIsTheBackendMissing) {
  for (auto env : {EnvOf({}), EnvOf({{"AZURE_STORAGE_ACCOUNT", "acct"}}), EnvOf({{"AZURE_STORAGE_KEY", kDevKey}})}) {
    auto s = ResolveAzureSettings(env);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Status::Code::kNotFound);
    EXPECT_NE(s.status().message().find("Azure backend is missing in the cluster configuration"), std::string::npos);
    EXPECT_NE(s.status().message().find("AZURE_STORAGE_KEY"), std::string::npos);
  }
}

TEST(AzureAuthTest, KeyMustBeBase64) {
  auto s = ResolveAzureSettings(EnvOf({{"AZURE_STORAGE_ACCOUNT", "acct"}, {"AZURE_STORAGE_KEY", "not base64!"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("AZURE_STORAGE_KEY"), std::string::npos);
  EXPECT_EQ(s.status().message().find("not base64!"), std::string::npos) << "the key never shows";
}

TEST(AzureAuthTest, EndpointForms) {
  auto resolve = [](std::map<std::string, std::string> extra) {
    extra["AZURE_STORAGE_ACCOUNT"] = "acct";
    extra["AZURE_STORAGE_KEY"] = kDevKey;
    return ResolveAzureSettings(EnvOf(std::move(extra)));
  };
  auto def = resolve({});
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_EQ(def->endpoint, "https://acct.blob.core.windows.net");
  EXPECT_EQ(def->key.size(), 64u);
  auto azurite = resolve({{"AIS_AZURE_URL", "http://127.0.0.1:10000/devstoreaccount1/"}});
  ASSERT_TRUE(azurite.ok());
  EXPECT_EQ(azurite->endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  auto suffix = resolve({{"AIS_AZURE_URL", "blob.core.chinacloudapi.cn"}, {"AIS_AZURE_PROTO", "http://"}});
  ASSERT_TRUE(suffix.ok());
  EXPECT_EQ(suffix->endpoint, "http://acct.blob.core.chinacloudapi.cn");
  EXPECT_FALSE(resolve({{"AIS_AZURE_URL", "httpx://h"}}).ok());
  EXPECT_FALSE(resolve({{"AIS_AZURE_PROTO", "https"}}).ok());
  EXPECT_EQ(azurite->Describe().find(kDevKey), std::string::npos);
}

TEST(AzureAuthTest, StringToSignOfARangedPinnedGet) {
  const std::string sts =
      AzureStringToSign("GET", "http://127.0.0.1:10000/devstoreaccount1/cont/dir/a%20b.bin",
                        {"If-Match: \"0x8D1\"", "x-ms-version: 2021-08-06", "X-Ms-Range:  bytes=0-99 ", kDate},
                        "devstoreaccount1");
  EXPECT_EQ(sts,
            "GET\n\n\n\n\n\n\n\n\"0x8D1\"\n\n\n\n"
            "x-ms-date:Sun, 29 Nov 2026 07:00:00 GMT\nx-ms-range:bytes=0-99\nx-ms-version:2021-08-06\n"
            "/devstoreaccount1/devstoreaccount1/cont/dir/a%20b.bin");
  // Computed independently:
  //   python3 -c 'import hmac,hashlib,base64; k=base64.b64decode(KEY);
  //     print(base64.b64encode(hmac.new(k, STS.encode(), hashlib.sha256).digest()).decode())'
  auto key = ResolveAzureSettings(EnvOf({{"AZURE_STORAGE_ACCOUNT", "a"}, {"AZURE_STORAGE_KEY", kDevKey}}))->key;
  EXPECT_EQ(AzureSignature(key, sts), "B7x/4UiNAULp19B+ujK7age68CZk0cGWIuoWdnVyrKk=");
}

TEST(AzureAuthTest, StringToSignOfABlockListPut) {
  const std::string sts = AzureStringToSign(
      "PUT", "http://127.0.0.1:10000/devstoreaccount1/cont/o?comp=blocklist",
      {"Content-Type: application/xml", "Content-Length: 11", "x-ms-version: 2021-08-06", kDate}, "devstoreaccount1");
  EXPECT_EQ(sts,
            "PUT\n\n\n11\n\napplication/xml\n\n\n\n\n\n\n"
            "x-ms-date:Sun, 29 Nov 2026 07:00:00 GMT\nx-ms-version:2021-08-06\n"
            "/devstoreaccount1/devstoreaccount1/cont/o\ncomp:blocklist");
  auto key = ResolveAzureSettings(EnvOf({{"AZURE_STORAGE_ACCOUNT", "a"}, {"AZURE_STORAGE_KEY", kDevKey}}))->key;
  EXPECT_EQ(AzureSignature(key, sts), "21JKFDKoPR/IFg3Lr2hVtvhzKngNyuxNph5EC5wyOLo=");
}

TEST(AzureAuthTest, CanonicalResourceQuery) {
  // Names lower-cased and sorted, values decoded; a zero Content-Length is empty.
  const std::string sts = AzureStringToSign(
      "GET", "https://acct.blob.core.windows.net/c?restype=container&comp=list&prefix=a%2Fb&Marker=m%3D1",
      {"Content-Length: 0"}, "acct");
  EXPECT_EQ(sts,
            "GET\n\n\n\n\n\n\n\n\n\n\n\n"
            "/acct/c\ncomp:list\nmarker:m=1\nprefix:a/b\nrestype:container");
  EXPECT_TRUE(AzureStringToSign("GET", "https://acct.blob.core.windows.net", {}, "acct").ends_with("\n/acct/"));
}

TEST(AzureClientTest, AttrsFromProperties) {
  const HttpCall::Headers h = {{"content-length", "1234"},
                               {"etag", "\"0x8DC0FFEE\""},
                               {"content-md5", "1B2M2Y8AsgTpgAmY7PhCfg=="},  // md5("")
                               {"last-modified", "Sun, 29 Nov 2026 07:00:00 GMT"},
                               {"content-type", "text/plain"},
                               {"x-ms-meta-color", "blue"}};
  RemoteObjectAttrs a = AzureClient::AttrsFromHeaders(h);
  EXPECT_EQ(a.provider, "azure");
  EXPECT_EQ(a.size, 1234u);
  EXPECT_EQ(a.etag, "0x8DC0FFEE");
  EXPECT_EQ(a.version, "0x8DC0FFEE");
  EXPECT_EQ(a.md5, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(a.mtime_ns, int64_t{1'795'935'600} * 1'000'000'000);
  EXPECT_EQ(a.content_type, "text/plain");
  EXPECT_EQ(a.user_meta, (KeyValues{{"color", "blue"}}));
  // A range's Content-Range names the blob's size.
  EXPECT_EQ(AzureClient::AttrsFromHeaders({{"content-length", "10"}, {"content-range", "bytes 0-9/77"}}).size, 77u);
  EXPECT_EQ(AzureClient::AttrsFromHeaders({{"content-md5", "short"}}).md5, "");
}

constexpr const char* kBlobList = R"(<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1" ContainerName="c">
  <Prefix>d/</Prefix><MaxResults>3</MaxResults><Delimiter>/</Delimiter>
  <Blobs>
    <Blob><Name>d/a.bin</Name><Properties><Last-Modified>Sun, 29 Nov 2026 07:00:00 GMT</Last-Modified>
      <Etag>0x8DC1</Etag><Content-Length>5</Content-Length><Content-MD5>1B2M2Y8AsgTpgAmY7PhCfg==</Content-MD5>
      <BlobType>BlockBlob</BlobType></Properties></Blob>
    <BlobPrefix><Name>d/sub/</Name></BlobPrefix>
    <Blob><Name Encoded="true">d/%EF%BF%BE</Name><Properties><Etag>"0x8DC2"</Etag><Content-Length>0</Content-Length>
      <Content-MD5 /></Properties></Blob>
  </Blobs>
  <NextMarker>2!72!MDAwMDE</NextMarker>
</EnumerationResults>)";

TEST(AzureClientTest, ParsesBlobList) {
  auto page = AzureClient::ParseBlobList(kBlobList, "");
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->entries.size(), 3u);
  const RemoteListEntry& a = page->entries[0];
  EXPECT_EQ(a.name, "d/a.bin");
  EXPECT_EQ(a.size, 5u);
  EXPECT_EQ(a.etag, "0x8DC1");
  EXPECT_EQ(a.version, "0x8DC1");
  EXPECT_EQ(a.md5, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(a.last_modified, "2026-11-29T07:00:00Z");
  EXPECT_FALSE(a.is_dir);
  EXPECT_EQ(page->entries[1].name, "d/\xef\xbf\xbe");
  EXPECT_EQ(page->entries[1].etag, "0x8DC2");
  EXPECT_EQ(page->entries[1].md5, "");
  EXPECT_EQ(page->entries[2].name, "d/sub/");
  EXPECT_TRUE(page->entries[2].is_dir);
  EXPECT_EQ(page->next_token, "2!72!MDAwMDE");
}

TEST(AzureClientTest, BlobListAfterStartAfter) {
  auto page = AzureClient::ParseBlobList(kBlobList, "d/a.bin");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].name, "d/\xef\xbf\xbe");
  EXPECT_EQ(page->entries[1].name, "d/sub/");
  // A prefix holding start_after still lists (names after it are under it).
  page = AzureClient::ParseBlobList(kBlobList, "d/sub/x");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[1].name, "d/sub/");
}

TEST(AzureClientTest, UnparsableBlobList) {
  EXPECT_FALSE(AzureClient::ParseBlobList("<nope", "").ok());
  EXPECT_FALSE(AzureClient::ParseBlobList("<Other/>", "").ok());
}

TEST(AzureClientTest, BlockIdsNameUploadAndPartAtOneLength) {
  EXPECT_EQ(AzureClient::BlockId("abc", 7), "YWJjLTAwMDAwNw==");  // base64("abc-000007")
  EXPECT_EQ(AzureClient::BlockId("u", 1).size(), AzureClient::BlockId("u", 10000).size());
}

}  // namespace
}  // namespace ais
