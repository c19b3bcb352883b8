// Name rules of rest-core.md §17 and their on-disk encoding.
#include "store/names.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "util/strings.h"
#include "util/test_util.h"

namespace ais {
namespace {

using namespace std::string_literals;

TEST(ValidateBucketName, AcceptsAlphaPlus) {
  const std::vector<std::string> ok = {"a", "A", "1", "bucket", "Bucket-1_x.y", "my.bucket", "a-", "_", "-",
                                      "a.b.c", std::string(kMaxBucketNameLen, 'b')};
  for (const auto& n : ok) {
    EXPECT_TRUE(ValidateBucketName(n).ok()) << '"' << n << '"';
  }
}

TEST(ValidateBucketName, RejectsSpecCases) {
  // The SDK integration cases of §17, plus the length limit, '..' and the reserved leading '.'.
  const std::vector<std::string> bad = {
      "*", ".", "", " ", "bucket/badname", "bucket and name", "#badname", "$badname", "~badname",  // SDK cases
      "..", "a..b", ".hidden", std::string(kMaxBucketNameLen + 1, 'b'), "a\n"s, "a\0b"s, "b\xc3\xa4", "a:b",
      "a%20b", "a+b"};
  for (const auto& n : bad) {
    Status st = ValidateBucketName(n);
    EXPECT_FALSE(st.ok()) << '"' << n << '"';
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << n;
  }
}

TEST(ParseNamespace, TheFormsAQueryCarries) {
  struct Case {
    std::string uname, uuid, name;
  };
  const std::vector<Case> ok = {{"", "", ""},         {"@#", "", ""},         {"@#ns", "", "ns"},
                                {"#ns", "", "ns"},     {"@Cjl2Ht4gE#", "Cjl2Ht4gE", ""}, {"@u-1#n.s", "u-1", "n.s"},
                                {"@remais", "remais", ""}, {"@@#", "@", ""}};
  for (const auto& c : ok) {
    auto ns = ParseNamespace(c.uname);
    ASSERT_TRUE(ns.ok()) << c.uname << ": " << ns.status().message();
    EXPECT_EQ(ns->uuid, c.uuid) << c.uname;
    EXPECT_EQ(ns->name, c.name) << c.uname;
  }
  const std::vector<std::string> bad = {"ns",     "@#a b",  "@#a/b", "@-u#", "@u-#",
                                       "@#a..b", "@" + std::string(33, 'u') + "#", "@#" + std::string(65, 'n')};
  for (const std::string& uname : bad) {
    auto ns = ParseNamespace(uname);
    ASSERT_FALSE(ns.ok()) << uname;
    EXPECT_EQ(ns.status().code(), Status::Code::kInvalidArgument) << uname;
  }
}

TEST(BucketKey, NamespacesAreKeysOfTheirOwn) {
  const std::string local = BucketKey("ais", BucketNs{.uuid = "", .name = "ns"}, "b");
  const std::string remote = BucketKey("ais", BucketNs{.uuid = "U1", .name = ""}, "b");
  EXPECT_EQ(local, "ais/@#ns/b");
  EXPECT_EQ(remote, "ais/@U1#/b");
  EXPECT_EQ(BucketKey("ais", BucketNs{}, "b"), "b");
  EXPECT_EQ(BucketKey("aws", BucketNs{}, "b"), "aws/b");
  EXPECT_FALSE(IsRemoteKey(local));
  EXPECT_TRUE(IsRemoteKey(remote) && IsRemoteAisKey(remote));
  EXPECT_TRUE(IsRemoteKey("aws/b") && !IsRemoteAisKey("aws/b"));
  EXPECT_FALSE(IsRemoteKey("b"));
  EXPECT_EQ(KeyProvider(local), "ais");
  EXPECT_EQ(KeyName(local), "b");
  EXPECT_EQ(KeyNs(local), (BucketNs{.uuid = "", .name = "ns"}));
  EXPECT_EQ(KeyNs(remote), (BucketNs{.uuid = "U1", .name = ""}));
  EXPECT_TRUE(KeyNs("aws/b").global());
  EXPECT_EQ(BucketCname(local), "ais://#ns/b");
  EXPECT_EQ(BucketCname("ais/@U1#x/b"), "ais://@U1#x/b");
  EXPECT_EQ(BucketCname("b"), "ais://b");
}

TEST(ValidateObjectName, AcceptsEverythingElseByteExact) {
  const std::vector<std::string> ok = {
      "a", "a/b/c", "dir/file.tar.gz", "with space", "  lead and trail  ", "#?%&=+!$()", "q?x=1&y=2",
      "-leading-dash", ".hidden", "a/.hidden", "...", "a/.../b", "..a", "a..", "a..b/c", "~", "~x", "~x/y",
      "a/~/b", "x~/y", "\xe6\x97\xa5\xe6\x9c\xac/\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb",  // UTF-8
      "\xc2\x80",  // U+0080: a C1 control in Unicode, but no byte of it is an ASCII control
      std::string(kMaxNameComponentLen, 'c'), std::string(kMaxNameComponentLen, 'c') + "/" + std::string(10, 'd'),
  };
  for (const auto& n : ok) EXPECT_TRUE(ValidateObjectName(n).ok()) << '"' << n << '"';
  // The longest accepted name: components of the maximum length joined by '/'.
  std::string longest;
  while (longest.size() + 1 + kMaxNameComponentLen <= kMaxObjectNameLen) {
    if (!longest.empty()) longest += "/";
    longest += std::string(kMaxNameComponentLen, 'x');
  }
  longest += "/" + std::string(kMaxObjectNameLen - longest.size() - 1, 'y');
  ASSERT_EQ(longest.size(), kMaxObjectNameLen);
  EXPECT_TRUE(ValidateObjectName(longest).ok());
  EXPECT_FALSE(ValidateObjectName(longest + "z").ok());
}

TEST(ValidateObjectName, RejectsSpecCases) {
  const std::vector<std::string> bad = {
      "",                                                   // empty
      "a/", "a/b/", "/",                                    // trailing '/' (outside HEAD)
      ".", "..", "../x", "a/./b", "a/..", "./a", "x/.", "a/../b", "../../etc/passwd",  // '.'/'..' components
      "~/", "~/x", "~/.ssh/id_rsa",                         // leading "~/"
      "/x", "/a/b", "//x",                                  // leading '/'
      "a//b", "a///", "x//",                                // empty component ('//')
      "a\0b"s, "\0"s, "a\nb", "\n", "a\rb", "a\tb", "\x01", "a/\x01", "\x1f", "\x7f", "x\x1b[0m",  // control bytes
      std::string(kMaxNameComponentLen + 1, 'c'),           // one component too long
      "a/" + std::string(kMaxNameComponentLen + 1, 'c') + "/b",
      std::string(kMaxObjectNameLen + 1, 'n'),              // whole name too long (one long component too)
  };
  for (const auto& n : bad) {
    Status st = ValidateObjectName(n);
    EXPECT_FALSE(st.ok()) << '"' << n << '"';
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << n;
  }
  // Too long overall although every component is short.
  std::string many;
  while (many.size() <= kMaxObjectNameLen) many += "abcdefg/";
  many += "z";
  EXPECT_FALSE(ValidateObjectName(many).ok());
}

TEST(ValidateObjectName, TrailingSlashOnlyWhenAllowed) {
  for (const char* n : {"a/", "a/b/", "dir.d/"}) {
    EXPECT_FALSE(ValidateObjectName(n).ok()) << n;
    EXPECT_TRUE(ValidateObjectName(n, /*allow_trailing_slash=*/true).ok()) << n;
  }
  // The other rules still apply to a HEAD probe.
  for (const char* n : {"/", "//", "a//", "../", "./", "a/../", "~/", "/a/"}) {
    EXPECT_FALSE(ValidateObjectName(n, true).ok()) << n;
  }
}

TEST(ValidateObjectName, PercentDecodedControlBytesAreRejected) {
  // The router decodes first; "%00" and "%0A" must not slip through as bytes.
  for (const char* raw : {"a%00b", "a%0Ab", "%0D", "x/%7F"}) {
    auto decoded = PercentDecode(raw, false);
    ASSERT_TRUE(decoded.has_value()) << raw;
    EXPECT_FALSE(ValidateObjectName(*decoded).ok()) << raw;
  }
  auto dotdot = PercentDecode("a/%2E%2E/b", false);
  ASSERT_TRUE(dotdot.has_value());
  EXPECT_FALSE(ValidateObjectName(*dotdot).ok());
}

TEST(ValidatePrefix, EmptyAndTrailingSlashAllowed) {
  for (const char* p : {"", "a", "a/", "a/b", "a/b/", ".hid", "sp ace/", "\xe6\x97\xa5"}) {
    EXPECT_TRUE(ValidatePrefix(p).ok()) << '"' << p << '"';
  }
  const std::vector<std::string> bad = {
      "/", "/a", "..", "../", "a/../b", "a/./", "a//", "~/", "~/x", "a\n"s, "a\0"s,
      std::string(kMaxObjectNameLen + 1, 'p')};
  for (const auto& p : bad) {
    EXPECT_FALSE(ValidatePrefix(p).ok()) << '"' << p << '"';
  }
}

TEST(ObjectRelPath, DirectoriesCarryTheSuffix) {
  EXPECT_EQ(ObjectRelPath("a"), "a");
  EXPECT_EQ(ObjectRelPath("a/b"), "a\x01/b");
  EXPECT_EQ(ObjectRelPath("a/b/c"), "a\x01/b\x01/c");
  EXPECT_EQ(ObjectRelPath(".hidden/..."), ".hidden\x01/...");
  EXPECT_EQ(ObjectRelPath("sp ace/#?%"), "sp ace\x01/#?%");
}

TEST(ObjectRelPath, ComponentsFitNameMaxAndAreInjective) {
  const std::vector<std::string> names = {"a", "a/b", "a/b/c", "ab", "a-b", "a.b", "b/a", std::string(254, 'x'),
                                          std::string(254, 'x') + "/" + std::string(254, 'y')};
  std::set<std::string> seen;
  for (const auto& n : names) {
    ASSERT_TRUE(ValidateObjectName(n).ok()) << n;
    std::string rel = ObjectRelPath(n);
    EXPECT_TRUE(seen.insert(rel).second) << n;
    for (auto comp : Split(rel, '/')) {
      EXPECT_LE(comp.size(), 255u) << n;  // NAME_MAX on Linux
      EXPECT_NE(comp, ".");
      EXPECT_NE(comp, "..");
    }
  }
}

TEST(PrefixRelDir, DirectoryHoldingThePrefix) {
  EXPECT_EQ(PrefixRelDir(""), "");
  EXPECT_EQ(PrefixRelDir("x"), "");
  EXPECT_EQ(PrefixRelDir("train/x"), "train\x01");
  EXPECT_EQ(PrefixRelDir("train/"), "train\x01");
  EXPECT_EQ(PrefixRelDir("a/b/c"), "a\x01/b\x01");
  EXPECT_EQ(PrefixRelDir("a/b/"), "a\x01/b\x01");
  // The directory of an object's prefix is the object's parent on disk.
  for (const char* n : {"a/b/c", "train/x", "q/r"}) {
    std::string rel = ObjectRelPath(n);
    EXPECT_EQ(PrefixRelDir(n), rel.substr(0, rel.rfind('/'))) << n;
  }
}

TEST(ObjectRelPath, ObjectAndDirectoryOfTheSameNameCoexistOnDisk) {
  test::TempDir dir;
  const std::vector<std::string> names = {"a", "a/b", "a/b/c", "a/b/c/d", "b", "b/a", "a-c", "a.b"};
  for (const auto& n : names) {
    std::filesystem::path p = dir.Sub(ObjectRelPath(n));
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << "content of " << n;
  }
  for (const auto& n : names) {
    std::filesystem::path p = dir.Sub(ObjectRelPath(n));
    ASSERT_TRUE(std::filesystem::is_regular_file(p)) << n;
    std::ifstream in(p);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, "content of " + n);
  }
}

}  // namespace
}  // namespace ais
