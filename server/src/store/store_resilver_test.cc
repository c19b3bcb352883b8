// Mountpaths attached and detached at run time, and Store::ResilverObject moving objects (and
// their chunks) to where placement now wants them; a move a crash cut short, finished at start.
#include <gtest/gtest.h>

#include "store/store_fixture.h"
#include "util/json_text.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

class ResilverTest : public StoreTest {
 protected:
  void PutMany(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(Put("plain", "o" + std::to_string(i), Bytes(300, i)).ok());
      if (i % 4 == 0) {
        ASSERT_TRUE(Put("chunky", "c" + std::to_string(i), Bytes(5000, i)).ok());
      }
    }
  }
  void ExpectMany(int n) {
    for (int i = 0; i < n; ++i) {
      ExpectObject("plain", "o" + std::to_string(i), Bytes(300, i));
      if (i % 4 == 0) ExpectObject("chunky", "c" + std::to_string(i), Bytes(5000, i));
    }
  }
  // What the resilver job does: every object of every bucket through ResilverObject.
  size_t Resilver() {
    const uint64_t seen = store_->mountpath_changes();
    size_t moved_objects = 0;
    for (const auto& bucket : store_->buckets().Names()) {
      ObjectWalk walk{.prefix = {}, .after = {}, .headers = false, .stop = {}};
      EXPECT_TRUE(store_
                      ->ForEachObject(bucket, walk,
                                      [&](const WalkedObject& obj) {
                                        size_t moved = 0;
                                        uint64_t bytes = 0;
                                        Status st = store_->ResilverObject(bucket, obj.name(), &moved, &bytes);
                                        EXPECT_TRUE(st.ok()) << st.message();
                                        moved_objects += moved > 0 ? 1 : 0;
                                        return Status::OK();
                                      })
                      .ok());
    }
    EXPECT_TRUE(store_->ResilverDone(seen, store_->late_writes()));
    return moved_objects;
  }
  // Object files of `bucket` per mountpath slot.
  std::map<size_t, size_t> FilesPerSlot(const std::string& bucket) {
    std::map<size_t, size_t> out;
    const Mountpaths& mps = store_->mountpaths();
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      const std::string dir = mps.ObjectsDir(mp, bucket);
      if (!fs::exists(dir)) continue;
      for (const auto& e : fs::recursive_directory_iterator(dir)) out[mp] += e.is_regular_file() ? 1 : 0;
    }
    return out;
  }
};

TEST_F(ResilverTest, AnAttachedMountpathGetsItsShareAndNothingElseMoves) {
  constexpr int kObjects = 400;
  PutMany(kObjects);
  const std::string fifth = root_.Sub("mp5");
  fs::create_directories(fifth);
  ASSERT_TRUE(store_->AttachMountpath(fifth).ok());
  EXPECT_TRUE(store_->resilver_pending());
  ExpectMany(kObjects);  // readable before the resilver: found off their new primary
  const size_t moved = Resilver();
  EXPECT_FALSE(store_->resilver_pending());
  auto per = FilesPerSlot("plain");
  EXPECT_EQ(per[4], moved - (FilesPerSlot("chunky")[4]));
  EXPECT_GT(per[4], kObjects / 5 - 40u);
  EXPECT_LT(per[4], kObjects / 5 + 40u);
  size_t total = 0;
  for (auto& [mp, n] : per) total += n;
  EXPECT_EQ(total, static_cast<size_t>(kObjects));  // no duplicates left
  const Mountpaths& mps = store_->mountpaths();
  for (int i = 0; i < kObjects; ++i) {
    const std::string name = "o" + std::to_string(i);
    EXPECT_TRUE(fs::exists(mps.ObjectPath(mps.PrimaryFor("plain", name), "plain", name))) << name;
  }
  ExpectMany(kObjects);
  EXPECT_EQ(ListNames("plain", ListQuery{}).size(), static_cast<size_t>(kObjects));
  // Restarted with the same flags: the attached mountpath is still in the set.
  Reopen();
  EXPECT_EQ(store_->mountpaths().count(), 5u);
  EXPECT_EQ(store_->mountpaths().Find(fifth), std::optional<size_t>(4));
  ExpectMany(kObjects);
  EXPECT_EQ(Resilver(), 0u);  // nothing left to move
}

TEST_F(ResilverTest, ADetachedMountpathIsEmptiedFirstObjectsAndChunks) {
  constexpr int kObjects = 200;
  PutMany(kObjects);
  const std::string gone = paths_[1];
  ASSERT_TRUE(store_->DetachMountpath(gone, /*resilver=*/true).ok());
  EXPECT_EQ(store_->GetMountpaths().waiting_dd, std::vector<std::string>{gone});
  ExpectMany(kObjects);  // leaving: still read
  EXPECT_GT(Resilver(), 0u);
  EXPECT_TRUE(store_->GetMountpaths().waiting_dd.empty());
  EXPECT_EQ(store_->mountpaths().count(), 3u);
  // Everything readable even with the detached directory wiped.
  fs::remove_all(gone);
  ExpectMany(kObjects);
  Reopen();  // the same flags: it stays detached
  EXPECT_EQ(store_->mountpaths().count(), 3u);
  EXPECT_FALSE(store_->mountpaths().attached(*store_->mountpaths().Find(gone)));
  ExpectMany(kObjects);
}

TEST_F(ResilverTest, DetachAndAttachAreChecked) {
  const Mountpaths& mps = store_->mountpaths();
  fs::create_directories(root_.Sub("spare"));
  std::ofstream(root_.Sub("afile")) << "x";
  EXPECT_EQ(store_->AttachMountpath("relative/dir").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->AttachMountpath("/").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->AttachMountpath(root_.Sub("none")).code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->AttachMountpath(root_.Sub("afile")).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->AttachMountpath(paths_[0] + "/").code(), Status::Code::kInvalidArgument);  // already
  EXPECT_EQ(store_->AttachMountpath(paths_[0] + "/sub/..").code(), Status::Code::kInvalidArgument);
  fs::create_directories(paths_[0] + "/inner");
  EXPECT_EQ(store_->AttachMountpath(paths_[0] + "/inner").code(), Status::Code::kInvalidArgument);  // nested
  EXPECT_EQ(store_->AttachMountpath(root_.path()).code(), Status::Code::kInvalidArgument);  // holds them
  ASSERT_TRUE(store_->DisableMountpath(paths_[2], "test", false).ok());
  EXPECT_EQ(store_->AttachMountpath(paths_[2]).code(), Status::Code::kInvalidArgument);  // enable it instead
  EXPECT_EQ(mps.count(), 4u);
  EXPECT_EQ(store_->DetachMountpath(root_.Sub("spare"), true).code(), Status::Code::kNotFound);
  // The last enabled one cannot go; a disabled one goes at once.
  ASSERT_TRUE(store_->DisableMountpath(paths_[0], "test", false).ok());
  ASSERT_TRUE(store_->DisableMountpath(paths_[1], "test", false).ok());
  EXPECT_EQ(store_->DetachMountpath(paths_[3], true).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(store_->DetachMountpath(paths_[2], true).ok());
  EXPECT_FALSE(mps.attached(2));
  ASSERT_TRUE(store_->AttachMountpath(root_.Sub("spare")).ok());
  EXPECT_EQ(store_->AttachMountpath(root_.Sub("spare")).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(mps.count(), 4u);
}

TEST_F(ResilverTest, AMoveACrashCutShortIsFinishedAtStart) {
  ASSERT_TRUE(Put("plain", "x", Bytes(700, 1)).ok());
  ASSERT_TRUE(Put("plain", "y", Bytes(700, 2)).ok());
  // A resilver moves files only after a change of the mountpaths: objects may be off-primary.
  ASSERT_TRUE(store_->DisableMountpath(paths_[0], "test", false).ok());
  ASSERT_TRUE(store_->EnableMountpath(paths_[0]).ok());
  const Mountpaths& mps = store_->mountpaths();
  auto fake_move = [&](const std::string& name, bool renamed) -> std::pair<std::string, std::string> {
    const size_t from = mps.PrimaryFor("plain", name), to = (from + 1) % 4;
    const std::string src = mps.ObjectPath(from, "plain", name), dst = mps.ObjectPath(to, "plain", name);
    const std::string temp = mps.WorkDir(to) + "/" + name + ".tmp";
    fs::copy_file(src, temp);
    nlohmann::json m = {{"bucket", "plain"}, {"from", src}, {"to", dst}};
    EXPECT_TRUE(AtomicWriteFile(mps.WorkDir(to) + "/moving-" + name, JsonText(m), false).ok());
    if (renamed) {
      fs::create_directories(fs::path(dst).parent_path());
      fs::rename(temp, dst);
    }
    return std::make_pair(src, dst);
  };
  auto [x_src, x_dst] = fake_move("x", true);   // killed between the rename and the unlink
  auto [y_src, y_dst] = fake_move("y", false);  // killed before the rename
  Reopen();
  EXPECT_FALSE(fs::exists(x_src));
  EXPECT_TRUE(fs::exists(x_dst));
  EXPECT_TRUE(fs::exists(y_src));
  EXPECT_FALSE(fs::exists(y_dst));
  EXPECT_EQ(WorkEntries(), std::set<std::string>{});
  ExpectObject("plain", "x", Bytes(700, 1));
  ExpectObject("plain", "y", Bytes(700, 2));
  EXPECT_EQ(ListNames("plain", ListQuery{}), (std::vector<std::string>{"x", "y"}));
}

TEST_F(ResilverTest, ACrashDuplicateListsOnceAndTheResilverKeepsTheNewest) {
  ASSERT_TRUE(Put("plain", "d", Bytes(100, 1)).ok());
  ASSERT_TRUE(store_->DisableMountpath(paths_[0], "test", false).ok());  // placement may be off-primary now
  ASSERT_TRUE(store_->EnableMountpath(paths_[0]).ok());
  const Mountpaths& mps = store_->mountpaths();
  const size_t at = mps.PrimaryFor("plain", "d"), other = (at + 1) % 4;
  const std::string stale = mps.ObjectPath(other, "plain", "d");
  fs::create_directories(fs::path(stale).parent_path());
  fs::copy_file(mps.ObjectPath(at, "plain", "d"), stale);
  ASSERT_TRUE(Put("plain", "d", Bytes(100, 2)).ok());  // version 2 on the primary; the copy stays 1
  EXPECT_EQ(ListNames("plain", ListQuery{}), std::vector<std::string>{"d"});
  size_t moved = 0;
  uint64_t bytes = 0;
  ASSERT_TRUE(store_->ResilverObject("plain", "d", &moved, &bytes).ok());
  EXPECT_FALSE(fs::exists(stale));
  ExpectObject("plain", "d", Bytes(100, 2));
}

TEST_F(ResilverTest, AWalkVisitsAnObjectThatMovedBetweenItsWalkers) {
  // Walker A reads directory s/ only once past its a* names; walker 4 (attached below) read its
  // directories at the start. An object moved from A to 4 in between is in neither view.
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(Put("plain", "s/" + std::to_string(i), Bytes(50, i)).ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(Put("plain", "a" + std::to_string(i), Bytes(50, i)).ok());
  const Mountpaths& mps = store_->mountpaths();
  std::map<std::string, size_t> before;
  for (int i = 0; i < 40; ++i) before["s/" + std::to_string(i)] = mps.PrimaryFor("plain", "s/" + std::to_string(i));
  std::set<size_t> a_on;
  for (int i = 0; i < 8; ++i) a_on.insert(mps.PrimaryFor("plain", "a" + std::to_string(i)));
  const std::string fifth = root_.Sub("mp5");
  fs::create_directories(fifth);
  ASSERT_TRUE(store_->AttachMountpath(fifth).ok());
  std::string mover;
  for (const auto& [name, mp] : before) {
    if (mps.PrimaryFor("plain", name) == 4 && a_on.contains(mp)) mover = name;
  }
  ASSERT_FALSE(mover.empty()) << "no s/ object whose new primary is the attached mountpath";
  std::vector<std::string> seen;
  ObjectWalk walk{.prefix = {}, .after = {}, .headers = true, .stop = {}};
  ASSERT_TRUE(store_
                  ->ForEachObject("plain", walk,
                                  [&](const WalkedObject& obj) {
                                    if (seen.empty()) {
                                      size_t moved = 0;
                                      uint64_t bytes = 0;
                                      EXPECT_TRUE(store_->ResilverObject("plain", mover, &moved, &bytes).ok());
                                      EXPECT_EQ(moved, 1u);
                                    }
                                    if (obj.name() == mover) {
                                      EXPECT_EQ(obj.mp(), 4u);
                                      EXPECT_EQ(obj.meta().size, 50u);
                                    }
                                    seen.push_back(obj.name());
                                    return Status::OK();
                                  })
                  .ok());
  std::vector<std::string> want;
  for (int i = 0; i < 8; ++i) want.push_back("a" + std::to_string(i));
  for (const auto& [name, mp] : before) want.push_back(name);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(seen, want);  // all, in order, once
}

}  // namespace
}  // namespace ais::store_test

namespace ais::store_test {
namespace {

TEST_F(StoreTest, AMirroredReadGoesToTheLeastBusyCopy) {
  ASSERT_TRUE(store_->CreateBucket("m2", nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":2}})")).ok());
  ASSERT_TRUE(Put("m2", "x", Bytes(5000, 7)).ok());
  const Mountpaths& mps = store_->mountpaths();
  const size_t at = mps.PrimaryFor("m2", "x");
  const size_t slot = mps.MirrorSlots("m2", "x", at, 2).at(0);
  auto reading = [&](size_t mp) { return mps.reading(mp)->load(); };
  {
    auto first = store_->Open("m2", "x");  // nothing in flight: the object file
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(reading(at), 1);
    EXPECT_EQ(reading(slot), 0);
    auto second = store_->Open("m2", "x");  // its mountpath is busier: the copy
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(reading(at), 1);
    EXPECT_EQ(reading(slot), 1);
    std::string got(5000, '\0');
    ASSERT_TRUE(second->OpenAll().ok());
    ASSERT_TRUE(second->ReadAt(0, got.data(), got.size()).ok());
    EXPECT_TRUE(SameBytes(got, Bytes(5000, 7)));
  }
  EXPECT_EQ(reading(at), 0);  // counted only while the handles live
  EXPECT_EQ(reading(slot), 0);
  // A copy that is missing (or of another version) is never read: the object file takes the read.
  ASSERT_TRUE(Put("plain", "unmirrored", "x").ok());
  auto busy = store_->Open("m2", "x");
  const std::string copy = mps.MirrorPath(slot, "m2", "x");
  std::filesystem::remove(copy);  // as if it fell behind (the repair puts it back later)
  auto next = store_->Open("m2", "x");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(reading(at), 2);
  EXPECT_EQ(reading(slot), 0);
}

}  // namespace
}  // namespace ais::store_test
