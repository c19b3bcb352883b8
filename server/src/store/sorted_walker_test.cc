// SortedWalker over one objects directory: byte order, prefix, resume-after, foreign entries.
#include "store/sorted_walker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/names.h"
#include "util/test_util.h"

namespace ais {
namespace {

// Names whose byte order differs from a naive path walk: '-' (0x2d) and '.' (0x2e) sort before '/'
// (0x2f), so "a-c" and "a.b" come between "a" and "a/b"; '0' (0x30) comes after all of "a/...".
const std::vector<std::string> kTricky = {
    "a", "a-c", "a/b", "a/b/c", "a.b", "a0", "A", "b", "a/b-", "a/b.x", "a/b/c/d", "a/ba", "~", " space",
    "\xe6\x97\xa5\xe6\x9c\xac/\xd1\x84",  // UTF-8: bytes >= 0x80 sort after ASCII
    "\xc3\xa9t\xc3\xa9", "z/y/x", ".hidden", "...", "#?%&=+",
};

// Creates the file of object `name` where the store would put it.
void PlaceObject(const std::string& objects_dir, const std::string& name) {
  std::filesystem::path p = objects_dir + "/" + ObjectRelPath(name);
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << name;
}

class SortedWalkerTest : public ::testing::Test {
 protected:
  std::string objects_dir() const { return dir_.Sub("%ob"); }
  void Touch(const std::string& name) { PlaceObject(objects_dir(), name); }

  std::vector<std::string> Walk(const std::string& prefix, const std::string& after) {
    SortedWalker w(objects_dir(), prefix, after);
    std::vector<std::string> out;
    std::string name, path;
    while (true) {
      auto more = w.Next(&name, &path);
      EXPECT_TRUE(more.ok()) << more.status().message();
      if (!more.ok() || !*more) break;
      EXPECT_EQ(path, objects_dir() + "/" + ObjectRelPath(name));
      out.push_back(name);
    }
    return out;
  }

  static std::vector<std::string> Reference(std::vector<std::string> names, const std::string& prefix,
                                            const std::string& after) {
    std::sort(names.begin(), names.end());  // std::string compares bytes as unsigned, like memcmp
    std::vector<std::string> out;
    for (auto& n : names) {
      if (n.starts_with(prefix) && n > after) out.push_back(n);
    }
    return out;
  }

  test::TempDir dir_;
};

TEST_F(SortedWalkerTest, MissingDirectoryIsEmpty) {
  EXPECT_TRUE(Walk("", "").empty());
  EXPECT_TRUE(Walk("a/b/", "").empty());
}

TEST_F(SortedWalkerTest, YieldsByteOrder) {
  for (const auto& n : kTricky) Touch(n);
  EXPECT_EQ(Walk("", ""), Reference(kTricky, "", ""));
  // Spelled out once, to make the expectation visible.
  auto all = Walk("", "");
  std::vector<std::string> head(all.begin(), all.begin() + 8);
  EXPECT_EQ(head, (std::vector<std::string>{" space", "#?%&=+", "...", ".hidden", "A", "a", "a-c", "a.b"}));
}

TEST_F(SortedWalkerTest, PrefixAndAfter) {
  for (const auto& n : kTricky) Touch(n);
  // {prefix, after}: prefixes ending inside a name, at a directory, with '/'; "after" values that are
  // names, directories, and strings between them.
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"a", ""}, {"a/", ""}, {"a/b", ""}, {"a/b/", ""}, {"a/b/c", ""}, {"a/b/c/", ""}, {"z/", ""}, {"zz", ""},
      {"\xe6", ""}, {".", ""}, {"a/b-", ""}, {"", "a"}, {"", "a/b"}, {"", "a/b/"}, {"", "a.b"}, {"", "a/"},
      {"", "a/b/c"}, {"", "~"}, {"", "~~"}, {"", "\xff"}, {"", " "}, {"a", "a"}, {"a/", "a/b"}, {"a/b", "a/b/c"},
      {"a/b/", "a/"}, {"a/", "a/c"},
  };
  for (const auto& [prefix, after] : queries) {
    EXPECT_EQ(Walk(prefix, after), Reference(kTricky, prefix, after))
        << "prefix \"" << prefix << "\" after \"" << after << '"';
  }
}

TEST_F(SortedWalkerTest, ResumesAfterEveryName) {
  for (const auto& n : kTricky) Touch(n);
  const auto all = Reference(kTricky, "", "");
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(Walk("", all[i]), std::vector<std::string>(all.begin() + i + 1, all.end())) << all[i];
  }
}

// Every directory under the objects dir dated a second back, so that walks keep their sorted
// entries in SortedDirs() (a directory modified within kSettleNs is never kept).
void AgeDirectories(const std::string& root) {
  const auto past = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(1);
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_directory()) std::filesystem::last_write_time(e.path(), past);
  }
  std::filesystem::last_write_time(root, past);
}

TEST_F(SortedWalkerTest, CachedDirectoriesResumeEverywhereAndSeeChanges) {
  for (const auto& n : kTricky) Touch(n);
  AgeDirectories(objects_dir());
  auto names = kTricky;
  for (int round = 0; round < 2; ++round) {  // the first round fills the cache, the second uses it
    const auto all = Reference(names, "", "");
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(Walk("", all[i]), std::vector<std::string>(all.begin() + i + 1, all.end())) << all[i];
    }
    EXPECT_EQ(Walk("a/", ""), Reference(names, "a/", ""));
  }
  // A new object (and a removed one) change their directory's mtime: the next walk reads it again.
  Touch("a/bb");
  names.push_back("a/bb");
  std::filesystem::remove(objects_dir() + "/" + ObjectRelPath("a0"));
  names.erase(std::find(names.begin(), names.end(), "a0"));
  EXPECT_EQ(Walk("", ""), Reference(names, "", ""));
  EXPECT_EQ(Walk("a/", "a/b"), Reference(names, "a/", "a/b"));
}

TEST_F(SortedWalkerTest, SkipsDirectoriesThatAreNotOurs) {
  Touch("a/b");
  Touch("x");
  // A directory without the 0x01 suffix is not an object directory (e.g. lost+found).
  std::filesystem::create_directories(objects_dir() + "/lost+found/deep");
  std::ofstream(objects_dir() + "/lost+found/deep/file") << "?";
  EXPECT_EQ(Walk("", ""), (std::vector<std::string>{"a/b", "x"}));
  EXPECT_EQ(Walk("lost", ""), std::vector<std::string>{});
}

TEST_F(SortedWalkerTest, AgreesWithReferenceOnRandomTrees) {
  std::mt19937 rng(99);
  const std::string alphabet = "ab.-~_0";
  for (int round = 0; round < 6; ++round) {
    test::TempDir tree;
    std::set<std::string> names;
    while (names.size() < 120) {
      std::string n;
      for (int comps = 1 + rng() % 4; comps > 0; --comps) {
        if (!n.empty()) n += "/";
        for (int len = 1 + rng() % 3; len > 0; --len) n.push_back(alphabet[rng() % alphabet.size()]);
      }
      if (ValidateObjectName(n).ok()) names.insert(n);
    }
    const std::string objects = tree.Sub("%ob");
    for (const auto& n : names) PlaceObject(objects, n);
    const std::vector<std::string> all(names.begin(), names.end());
    for (int q = 0; q < 25; ++q) {
      auto cut = [&](const std::string& s) { return s.substr(0, rng() % (s.size() + 1)); };
      std::string prefix = rng() % 3 ? cut(all[rng() % all.size()]) : "";
      std::string after = rng() % 2 ? cut(all[rng() % all.size()]) : "";
      SortedWalker w(objects, prefix, after);
      std::vector<std::string> got;
      std::string name, path;
      for (;;) {
        auto more = w.Next(&name, &path);
        ASSERT_TRUE(more.ok()) << more.status().message();
        if (!*more) break;
        got.push_back(name);
      }
      ASSERT_EQ(got, Reference(all, prefix, after)) << "prefix \"" << prefix << "\" after \"" << after << '"';
    }
  }
}

}  // namespace
}  // namespace ais
