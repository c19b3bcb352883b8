// Placement of objects and chunks over mountpaths, and the spelling of every path below one.
#include "store/mountpaths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace ais {
namespace {

const std::vector<std::string> kFour = {"/data/mp1", "/data/mp2", "/data/mp3", "/data/mp4"};

std::vector<std::string> SampleNames(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0: out.push_back("obj-" + std::to_string(i)); break;
      case 1: out.push_back("train/shard-" + std::to_string(100000 + i) + ".tar"); break;
      default: out.push_back("d" + std::to_string(i % 17) + "/x/" + std::to_string(i * 7919)); break;
    }
  }
  return out;
}

TEST(Mountpaths, PathsAreSortedAndTrailingSlashesDropped) {
  Mountpaths mps({"/data/mp3/", "/data/mp1", "/data/mp2//"});
  EXPECT_EQ(mps.size(), 3u);
  EXPECT_EQ(mps.paths(), (std::vector<std::string>{"/data/mp1", "/data/mp2", "/data/mp3"}));
}

TEST(Mountpaths, PlacementIsDeterministic) {
  Mountpaths a(kFour), b(kFour);
  for (const auto& name : SampleNames(2000)) {
    size_t mp = a.PrimaryFor("bck", name);
    ASSERT_LT(mp, 4u);
    EXPECT_EQ(mp, a.PrimaryFor("bck", name)) << name;
    EXPECT_EQ(mp, b.PrimaryFor("bck", name)) << name;
  }
}

TEST(Mountpaths, PlacementIgnoresTheOrderPathsAreGivenIn) {
  Mountpaths ref(kFour);
  std::vector<std::string> perm = kFour;
  std::sort(perm.begin(), perm.end());
  int permutations = 0;
  do {
    std::vector<std::string> given = perm;
    given[permutations % 4] += "/";  // and however they are spelled
    Mountpaths mps(given);
    for (const auto& name : SampleNames(300)) {
      ASSERT_EQ(mps.paths()[mps.PrimaryFor("bck", name)], ref.paths()[ref.PrimaryFor("bck", name)]) << name;
    }
    ++permutations;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(permutations, 24);
}

TEST(Mountpaths, SpreadsObjectsEvenly) {
  Mountpaths mps(kFour);
  constexpr size_t kNames = 10000;
  std::vector<size_t> counts(4);
  for (const auto& name : SampleNames(kNames)) ++counts[mps.PrimaryFor("bck", name)];
  const double expected = kNames / 4.0;
  double chi2 = 0;
  for (size_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  // Chi-square with 3 degrees of freedom: 16.27 is the 0.1% critical value.
  EXPECT_LT(chi2, 16.27) << counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3];
  for (size_t c : counts) EXPECT_GT(c, 2200u);
}

TEST(Mountpaths, BucketIsPartOfThePlacementKey) {
  Mountpaths mps(kFour);
  int differ = 0;
  for (const auto& name : SampleNames(1000)) differ += mps.PrimaryFor("b1", name) != mps.PrimaryFor("b2", name);
  EXPECT_GT(differ, 600);  // independent choices differ 3/4 of the time
}

TEST(Mountpaths, AddingAMountpathMovesObjectsOnlyToIt) {
  Mountpaths before(kFour);
  std::vector<std::string> five = kFour;
  five.push_back("/data/mp5");
  Mountpaths after(five);
  size_t moved = 0;
  const auto names = SampleNames(10000);
  for (const auto& name : names) {
    const std::string& was = before.path(before.PrimaryFor("bck", name));
    const std::string& is = after.path(after.PrimaryFor("bck", name));
    if (was != is) {
      EXPECT_EQ(is, "/data/mp5") << name;
      ++moved;
    }
  }
  EXPECT_GT(moved, names.size() / 5 - 300);
  EXPECT_LT(moved, names.size() / 5 + 300);
}

TEST(Mountpaths, SingleMountpathTakesEverything) {
  Mountpaths mps({"/only"});
  for (const auto& name : SampleNames(100)) EXPECT_EQ(mps.PrimaryFor("bck", name), 0u);
  for (uint32_t k = 1; k <= 10; ++k) EXPECT_EQ(mps.ForChunk("upload", k), 0u);
}

TEST(Mountpaths, ChunksRoundRobinOverAllMountpaths) {
  Mountpaths mps(kFour);
  std::set<size_t> starts;
  for (int u = 0; u < 200; ++u) {
    const std::string id = "upload" + std::to_string(u);
    const size_t first = mps.ForChunk(id, 1);
    starts.insert(first);
    std::vector<size_t> per_mp(4);
    for (uint32_t k = 1; k <= 40; ++k) {
      size_t mp = mps.ForChunk(id, k);
      ASSERT_LT(mp, 4u);
      EXPECT_EQ(mp, (first + k - 1) % 4) << id << " chunk " << k;
      EXPECT_EQ(mp, mps.ForChunk(id, k));
      ++per_mp[mp];
    }
    EXPECT_EQ(per_mp, (std::vector<size_t>{10, 10, 10, 10})) << id;
  }
  EXPECT_EQ(starts.size(), 4u);  // uploads do not all start on the same disk
}

TEST(Mountpaths, PathSpelling) {
  Mountpaths mps({"/m/b/", "/m/a"});
  ASSERT_EQ(mps.paths()[0], "/m/a");
  EXPECT_EQ(mps.BucketDir(0, "bck"), "/m/a/ais/bck");
  EXPECT_EQ(mps.ObjectsDir(1, "bck"), "/m/b/ais/bck/%ob");
  EXPECT_EQ(mps.ObjectPath(0, "bck", "x"), "/m/a/ais/bck/%ob/x");
  EXPECT_EQ(mps.ObjectPath(0, "bck", "a/b/c"), "/m/a/ais/bck/%ob/a\x01/b\x01/c");
  EXPECT_EQ(mps.ChunkDir(1, "bck", "UpLoAd"), "/m/b/ais/bck/%ch/UpLoAd");
  EXPECT_EQ(mps.ChunkPath(1, "bck", "UpLoAd", 1), "/m/b/ais/bck/%ch/UpLoAd/0001");
  EXPECT_EQ(mps.ChunkPath(1, "bck", "UpLoAd", 42), "/m/b/ais/bck/%ch/UpLoAd/0042");
  EXPECT_EQ(mps.ChunkPath(1, "bck", "UpLoAd", 9999), "/m/b/ais/bck/%ch/UpLoAd/9999");
  EXPECT_EQ(mps.WorkDir(0), "/m/a/.ais.work");
  EXPECT_EQ(mps.BmdPath(1), "/m/b/.ais.bmd.json");
}

TEST(Mountpaths, DisabledMountpathsGetNothingNew) {
  Mountpaths mps(kFour);
  for (int i = 0; i < 200; ++i) {
    std::string name = "obj-" + std::to_string(i);
    auto ranked = mps.Ranked("b", name);
    ASSERT_EQ(ranked.size(), 4u);
    EXPECT_EQ(ranked[0], mps.PrimaryFor("b", name));  // the HRW choice is the ranking's head
  }
  ASSERT_TRUE(mps.SetEnabled(1, false));
  EXPECT_FALSE(mps.SetEnabled(1, false));
  EXPECT_EQ(mps.num_disabled(), 1u);
  for (int i = 0; i < 200; ++i) {
    std::string name = "obj-" + std::to_string(i);
    auto ranked = mps.Ranked("b", name);
    size_t want = ranked[0] == 1 ? ranked[1] : ranked[0];  // the next in the ranking, others stay
    EXPECT_EQ(mps.PrimaryFor("b", name), want);
    for (uint32_t k = 1; k <= 8; ++k) EXPECT_NE(mps.ForChunk(name, k), 1u);
  }
  ASSERT_TRUE(mps.SetEnabled(1, true));
  EXPECT_EQ(mps.num_disabled(), 0u);
  EXPECT_EQ(mps.Find("/data/mp3/"), std::optional<size_t>(2));
  EXPECT_EQ(mps.Find("/data/mp9"), std::nullopt);
}

TEST(Mountpaths, AnAttachedPathTakesANewSlotAndItsShareOfObjects) {
  Mountpaths mps(kFour);
  std::vector<size_t> was;
  const auto names = SampleNames(5000);
  for (const auto& name : names) was.push_back(mps.PrimaryFor("bck", name));
  auto added = mps.Add("/data/mp0");  // sorts first, but slots keep their indexes
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, 4u);
  EXPECT_EQ(mps.size(), 5u);
  EXPECT_EQ(mps.count(), 5u);
  EXPECT_EQ(mps.path(0), "/data/mp1");
  size_t moved = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    size_t is = mps.PrimaryFor("bck", names[i]);
    if (is != was[i]) {
      EXPECT_EQ(is, 4u) << names[i];
      ++moved;
    }
  }
  EXPECT_GT(moved, names.size() / 5 - 200);
  EXPECT_LT(moved, names.size() / 5 + 200);
  // The same placement as a fresh set of the five: placement depends on the paths, not the slots.
  std::vector<std::string> five = kFour;
  five.push_back("/data/mp0");
  Mountpaths fresh(five);
  for (const auto& name : names) EXPECT_EQ(mps.path(mps.PrimaryFor("bck", name)), fresh.path(fresh.PrimaryFor("bck", name)));
}

TEST(Mountpaths, LeavingIsReadButGetsNothingNewAndDetachedIsGone) {
  Mountpaths mps(kFour);
  mps.SetState(2, Mountpaths::State::kLeaving);
  EXPECT_TRUE(mps.enabled(2));
  EXPECT_FALSE(mps.placeable(2));
  EXPECT_EQ(mps.num_placeable(), 3u);
  for (const auto& name : SampleNames(500)) {
    EXPECT_NE(mps.PrimaryFor("b", name), 2u);
    for (uint32_t k = 1; k <= 6; ++k) EXPECT_NE(mps.ForChunk(name, k), 2u);
    for (size_t s : mps.MirrorSlots("b", name, mps.PrimaryFor("b", name), 3)) EXPECT_NE(s, 2u);
    EXPECT_EQ(mps.Ranked("b", name).size(), 4u);  // still looked at by readers
  }
  mps.SetState(2, Mountpaths::State::kDetached);
  EXPECT_FALSE(mps.enabled(2));
  EXPECT_FALSE(mps.attached(2));
  EXPECT_EQ(mps.count(), 3u);
  EXPECT_EQ(mps.size(), 4u);  // the slot stays, never reused for another path
  EXPECT_EQ(mps.Attached(), (std::vector<std::string>{"/data/mp1", "/data/mp2", "/data/mp4"}));
  for (const auto& name : SampleNames(200)) EXPECT_EQ(mps.Ranked("b", name).size(), 3u);
  // Attached again: the old slot.
  auto again = mps.Add("/data/mp3");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 2u);
  EXPECT_EQ(mps.count(), 4u);
  EXPECT_EQ(mps.num_placeable(), 4u);
}

TEST(Mountpaths, TheSlotTableIsBounded) {
  Mountpaths mps({"/m/0"});
  for (size_t i = 1; i < Mountpaths::kMaxSlots; ++i) ASSERT_TRUE(mps.Add("/m/" + std::to_string(i)).ok());
  auto full = mps.Add("/m/last");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace ais
