// Damage on disk is an error, never wrong or short bytes: chunk files flipped, cut, grown or gone,
// object files cut, headers damaged; copies and appends do not launder damaged bytes; the scrub quarantines
// exactly the damaged objects (docs/storage-format.md, "Damage").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/header_cache.h"
#include "store/store.h"
#include "util/file.h"
#include "util/test_util.h"

namespace ais {
namespace {

namespace fs = std::filesystem;

std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

void FlipByte(const std::string& path, uint64_t off) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(static_cast<std::streamoff>(off));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x01);
  f.seekp(static_cast<std::streamoff>(off));
  f.write(&c, 1);
}

class StoreScrubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 1; i <= 3; ++i) paths_.push_back(root_.Sub("mp" + std::to_string(i)));
    Reopen();
    ASSERT_TRUE(store_->CreateBucket("b", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("c", nlohmann::json::parse(
                                               R"({"chunks":{"objsize_limit":"4KiB","chunk_size":"1KiB"}})"))
                    .ok());
  }
  void Reopen() {
    store_.reset();
    auto s = Store::Open(StoreOptions{.mountpaths = paths_});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  ObjectMeta Put(const std::string& bucket, const std::string& name, const std::string& data) {
    PutOptions opts;
    opts.size = data.size();
    auto w = store_->BeginPut(bucket, name, std::move(opts));
    EXPECT_TRUE(w.ok()) << w.status().message();
    ObjectMeta meta;
    if (!w.ok()) return meta;
    EXPECT_TRUE((*w)->Write(data.data(), data.size()).ok());
    Status st = (*w)->Commit(&meta);
    EXPECT_TRUE(st.ok()) << st.message();
    return meta;
  }
  std::string ObjPath(const std::string& bucket, const std::string& name) const {
    const Mountpaths& mps = store_->mountpaths();
    return mps.ObjectPath(mps.PrimaryFor(bucket, name), bucket, name);
  }
  std::string ChunkPath(const ObjectMeta& m, uint32_t k) const {
    const Mountpaths& mps = store_->mountpaths();
    return mps.ChunkPath(mps.ForChunk(m.upload_id, k), "c", m.upload_id, k);
  }
  // Reads the whole object as a GET does: open, slice, read every segment.
  Result<std::string> Get(const std::string& bucket, const std::string& name, bool verify = false) {
    auto h = store_->Open(bucket, name);
    if (!h.ok()) return h.status();
    if (verify) AIS_RETURN_IF_ERROR(h->VerifyChecksum());
    auto segs = h->Slice(0, h->meta().size);
    if (!segs.ok()) return segs.status();
    std::string out;
    for (const auto& s : *segs) {
      size_t at = out.size();
      out.resize(at + s.len);
      AIS_RETURN_IF_ERROR(PreadAll(s.fd, out.data() + at, s.len, s.offset));
    }
    return out;
  }
  void ExpectCorruption(const std::string& bucket, const std::string& name, const std::string& what,
                        bool verify = false) {
    auto got = Get(bucket, name, verify);
    ASSERT_FALSE(got.ok()) << what << ": read " << got->size() << " bytes";
    EXPECT_EQ(got.status().code(), Status::Code::kCorruption) << what << ": " << got.status().message();
  }
  // The scrub over every bucket and mountpath, as the job walks them: damaged name -> reason.
  std::map<std::string, std::string> Scrub() {
    std::map<std::string, std::string> damaged;
    for (const std::string bucket : {"b", "c"}) {
      ObjectWalk walk{.prefix = {}, .after = {}, .headers = false, .stop = {}};
      Status walked = store_->ForEachObject(bucket, walk, [&](const WalkedObject& obj) {
        std::string damage;
        uint64_t bytes = 0;
        Status st = store_->ScrubObject(bucket, obj.mp(), obj.name(), obj.path(), &damage, &bytes);
        EXPECT_TRUE(st.ok()) << obj.name() << ": " << st.message();
        if (!damage.empty()) damaged[bucket + "/" + obj.name()] = damage;
        return Status::OK();
      });
      EXPECT_TRUE(walked.ok()) << walked.message();
    }
    return damaged;
  }

  test::TempDir root_;
  std::vector<std::string> paths_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreScrubTest, ChunkFlippedByteIsCaughtByTheChecksum) {
  const std::string data = Bytes(5000, 1);
  ObjectMeta m = Put("c", "o", data);
  ASSERT_EQ(m.chunk_sizes.size(), 5u);
  FlipByte(ChunkPath(m, 3), 100);
  // Same length: the layout holds, only the content checksum can tell.
  auto plain = Get("c", "o");
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(*plain, data);
  ExpectCorruption("c", "o", "flipped chunk byte, verified", /*verify=*/true);
  auto h = store_->Open("c", "o");
  ASSERT_TRUE(h.ok());
  Status st = h->VerifyChecksum();
  EXPECT_TRUE(st.message().starts_with("BAD DATA CHECKSUM: ais://c/o: xxhash2(")) << st.message();
}

TEST_F(StoreScrubTest, ChunkOfTheWrongLengthOrMissingIsAlwaysAnError) {
  const std::string data = Bytes(5000, 2);
  ObjectMeta m = Put("c", "cut", data);
  ::truncate(ChunkPath(m, 2).c_str(), 1000);
  ExpectCorruption("c", "cut", "chunk cut short");
  // A read that does not touch the damaged chunk still works.
  auto h = store_->Open("c", "cut");
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->Slice(0, 1024).ok());
  EXPECT_EQ(h->Slice(1000, 100).status().code(), Status::Code::kCorruption);

  m = Put("c", "grown", data);
  { std::ofstream(ChunkPath(m, 5), std::ios::app | std::ios::binary) << "x"; }
  ExpectCorruption("c", "grown", "chunk grown by a byte");

  m = Put("c", "gone", data);
  fs::remove(ChunkPath(m, 4));
  ExpectCorruption("c", "gone", "chunk missing");
}

TEST_F(StoreScrubTest, OverwriteDuringReadIsStillAConflict) {
  Put("c", "o", Bytes(5000, 3));
  auto h = store_->Open("c", "o");
  ASSERT_TRUE(h.ok());
  Put("c", "o", Bytes(5000, 4));  // drops the chunks the handle would open next
  EXPECT_EQ(h->Slice(0, 5000).status().code(), Status::Code::kConflict);
}

TEST_F(StoreScrubTest, MonolithicCutGrownOrFlipped) {
  const std::string data = Bytes(3000, 5);
  Put("b", "cut", data);
  ::truncate(ObjPath("b", "cut").c_str(), static_cast<off_t>(fs::file_size(ObjPath("b", "cut")) - 1));
  ExpectCorruption("b", "cut", "object file cut by a byte");
  Put("b", "grown", data);
  { std::ofstream(ObjPath("b", "grown"), std::ios::app | std::ios::binary) << "x"; }
  ExpectCorruption("b", "grown", "object file grown by a byte");
  Put("b", "flip", data);
  FlipByte(ObjPath("b", "flip"), fs::file_size(ObjPath("b", "flip")) - 10);
  ASSERT_TRUE(Get("b", "flip").ok());
  ExpectCorruption("b", "flip", "flipped data byte, verified", /*verify=*/true);
}

TEST_F(StoreScrubTest, DamagedHeaderIsAnError) {
  const std::string data = Bytes(5000, 6);
  Put("b", "name-flip", data);
  {  // a flipped byte in the stored name
    std::string path = ObjPath("b", "name-flip");
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), 4096);
    size_t at = head.find("name-flip");
    ASSERT_NE(at, std::string::npos);
    FlipByte(path, at + 2);
  }
  ExpectCorruption("b", "name-flip", "flipped byte in the header's name");

  // Manifests rewritten to lie: chunk sizes that do not add up, an upload id that is a path.
  ObjectMeta m = Put("c", "sizes", data);
  auto rewrite = [&](const std::string& name, ObjectMeta bad) {
    uint64_t off = 0;
    std::string header = EncodeObjectHeader(bad, /*inline_data=*/false, &off);
    std::ofstream(ObjPath("c", name), std::ios::trunc | std::ios::binary) << header;
  };
  ObjectMeta bad = m;
  bad.chunk_sizes[0] -= 1;
  rewrite("sizes", bad);
  ExpectCorruption("c", "sizes", "chunk sizes short of the size");
  m = Put("c", "path", data);
  bad = m;
  bad.upload_id = "../../../../etc";
  rewrite("path", bad);
  ExpectCorruption("c", "path", "upload id with slashes");
}

TEST_F(StoreScrubTest, UnreadableHeaderIsSkippedByWalksAndCanBeDeleted) {
  for (const char* name : {"a", "b", "c"}) Put("b", name, Bytes(100, 7));
  const std::string path = ObjPath("b", "b");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);  // the magic: no header at all
  }
  // As after a crash: no header snapshot, and nothing the process kept of the header (the cache
  // by file and inode; the directory's entries, kept until the directory changes).
  Reopen();
  for (const auto& mp : paths_) fs::remove(mp + "/.ais.headers");
  Reopen();
  Headers().ForgetPath(path);
  const fs::path dir = fs::path(path).parent_path();
  fs::last_write_time(dir, fs::last_write_time(dir) + std::chrono::seconds(1));
  ListQuery q;
  q.limit = 100;
  auto listed = store_->List("b", q);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  std::vector<std::string> names;
  for (const auto& m : *listed) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(store_->damaged_skipped(), 1u);
  // A walk that asks is told instead (a job records it), and nothing is counted.
  std::vector<std::string> told;
  ObjectWalk walk{.prefix = {}, .after = {}, .headers = true, .stop = {}, .damaged = [&](const std::string& n, const Status& why) {
    EXPECT_EQ(why.code(), Status::Code::kCorruption);
    told.push_back(n);
    return Status::OK();
  }};
  ASSERT_TRUE(store_->ForEachObject("b", walk, [](const WalkedObject&) { return Status::OK(); }).ok());
  EXPECT_EQ(told, std::vector<std::string>{"b"});
  EXPECT_EQ(store_->damaged_skipped(), 1u);
  // DELETE removes it; the scrub (headers unread) then finds nothing damaged.
  ASSERT_TRUE(store_->Delete("b", "b").ok());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(store_->Delete("b", "b").code(), Status::Code::kNotFound);
  EXPECT_TRUE(Scrub().empty());
}

TEST_F(StoreScrubTest, CopyAndRechunkRefuseDamagedSources) {
  const std::string data = Bytes(5000, 7);
  ObjectMeta m = Put("c", "src", data);
  FlipByte(ChunkPath(m, 1), 0);
  Status st = store_->Copy("c", "src", "b", "dst");
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.message();
  EXPECT_EQ(store_->Open("b", "dst").status().code(), Status::Code::kNotFound);
  st = store_->Rechunk("c", "src", 0);
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.message();
  // An append starts from the object's bytes: damaged ones fail it, and the object stays as it was.
  auto app = store_->Append("c", "src", "", [](ObjectWriter& w) { return w.Write("more", 4); });
  EXPECT_EQ(app.status().code(), Status::Code::kCorruption) << app.status().message();
  auto h = store_->Open("c", "src");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->meta().size, data.size());
}

TEST_F(StoreScrubTest, ScrubQuarantinesExactlyTheDamaged) {
  const std::string data = Bytes(5000, 8);
  Put("b", "good/mono", data);
  Put("c", "good/chunked", data);
  Put("b", "bad/flip", data);
  FlipByte(ObjPath("b", "bad/flip"), fs::file_size(ObjPath("b", "bad/flip")) - 1);
  ObjectMeta chunked = Put("c", "bad/chunk", data);
  FlipByte(ChunkPath(chunked, 5), 0);
  ObjectMeta gone = Put("c", "bad/gone", data);
  fs::remove(ChunkPath(gone, 1));
  Put("b", "bad/header", data);
  FlipByte(ObjPath("b", "bad/header"), 3);  // the magic

  auto damaged = Scrub();
  std::set<std::string> names;
  for (auto& [n, why] : damaged) names.insert(n);
  EXPECT_EQ(names, (std::set<std::string>{"b/bad/flip", "c/bad/chunk", "c/bad/gone", "b/bad/header"}));
  EXPECT_TRUE(damaged["c/bad/chunk"].starts_with("BAD DATA CHECKSUM")) << damaged["c/bad/chunk"];
  EXPECT_NE(damaged["c/bad/gone"].find("chunk 1 is missing"), std::string::npos) << damaged["c/bad/gone"];

  for (auto& n : names) {
    auto slash = n.find('/');
    EXPECT_EQ(store_->Open(n.substr(0, slash), n.substr(slash + 1)).status().code(), Status::Code::kNotFound) << n;
  }
  ListQuery q;
  auto listed = store_->List("c", q);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, "good/chunked");
  auto good = Get("b", "good/mono", true);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, data);
  good = Get("c", "good/chunked", true);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, data);

  // Nothing deleted: object files, the damaged chunked object's 5 chunk files and a reason
  // each, kept across a restart; a second scrub finds nothing more.
  Reopen();
  size_t objects = 0, chunks = 0, infos = 0;
  for (const auto& mp : paths_) {
    std::string q_dir = mp + "/.ais.work/" + Store::kQuarantineDir;
    if (!fs::exists(q_dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(q_dir)) {
      if (!e.is_regular_file()) continue;
      std::string f = e.path().filename().string();
      if (f == "object") ++objects;
      else if (f == "info.json") ++infos;
      else ++chunks;
    }
  }
  EXPECT_EQ(objects, 4u);
  EXPECT_EQ(infos, 4u);
  EXPECT_EQ(chunks, 5u + 4u);  // bad/chunk's 5, bad/gone's remaining 4
  EXPECT_TRUE(Scrub().empty());
}

}  // namespace
}  // namespace ais

namespace ais {
namespace {

// A chunk on a disabled mountpath looks missing; the scrub must not take that for damage.
TEST_F(StoreScrubTest, NothingIsQuarantinedWhileAMountpathIsDisabled) {
  const std::string data = Bytes(5000, 9);
  ObjectMeta chunked = Put("c", "sound/chunked", data);
  std::optional<size_t> other;  // a mountpath holding a chunk but not the object file
  for (uint32_t k = 0; k < 5; ++k) {
    std::string chunk = ChunkPath(chunked, k);
    for (size_t mp = 0; mp < paths_.size(); ++mp) {
      if (chunk.starts_with(paths_[mp] + "/") && !ObjPath("c", "sound/chunked").starts_with(paths_[mp] + "/")) {
        other = mp;
      }
    }
  }
  ASSERT_TRUE(other.has_value()) << "the chunks of a 5-chunk object span more than one mountpath";
  ASSERT_TRUE(store_->DisableMountpath(paths_[*other], "test").ok());
  std::string damage;
  uint64_t bytes = 0;
  Status st = store_->ScrubObject("c", store_->mountpaths().PrimaryFor("c", "sound/chunked"), "sound/chunked",
                                  ObjPath("c", "sound/chunked"), &damage, &bytes);
  EXPECT_FALSE(st.ok());  // reported, as unavailable
  EXPECT_TRUE(damage.empty()) << damage;
  ASSERT_TRUE(store_->EnableMountpath(paths_[*other]).ok());
  auto back = Get("c", "sound/chunked", true);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, data);
}

}  // namespace
}  // namespace ais
