// BatchAssembler end to end on a real Store: order, naming, placeholders, soft errors, ranges,
// archived files, every output format.
#include "archive/batch_assembler.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "archive/archive_test_util.h"
#include "util/test_util.h"

namespace ais {
namespace {

class BatchAssemblerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions opts;
    for (int i = 1; i <= 2; ++i) opts.mountpaths.push_back(root_.Sub("mp" + std::to_string(i)));
    auto s = Store::Open(opts);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->CreateBucket("b", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("c", nullptr).ok());
    for (int i = 0; i < 20; ++i) {
      objs_.push_back(test::Bytes(static_cast<size_t>(i) * 9000, static_cast<uint32_t>(i)));  // 0 .. 171 KB
      test::PutObject(*store_, "b", "o" + std::to_string(i), objs_.back());
    }
    test::PutObject(*store_, "c", "other", "in bucket c");
    shard_ = {{"x/1.txt", "one", 0}, {"x/2.bin", test::Bytes(200000, 9), 0}};
    test::PutObject(*store_, "b", "s.tar", test::BuildArchive(ArchiveFormat::kTar, shard_));
    test::PutObject(*store_, "b", "s.tgz", test::BuildArchive(ArchiveFormat::kTgz, shard_));
  }

  MossRequest Request(const std::string& json) {
    auto r = ParseMossRequest(json, MossBucket{"ais", "b"});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(*r);
  }

  // Runs the batch; returns the archive's entries (or the error).
  Result<std::vector<test::Entry>> Run(const MossRequest& req, ArchiveFormat f = ArchiveFormat::kTar,
                                       BatchOptions opts = {}, test::StringSink* sink_out = nullptr,
                                       std::vector<ItemOutcome>* outcomes = nullptr) {
    opts.node_id = "t[test]";
    opts.pool = &pool_;
    BatchAssembler a(*store_, req, f, opts);
    test::StringSink sink;
    Status st = a.Run(&sink);
    if (outcomes) *outcomes = a.outcomes();
    if (sink_out) *sink_out = sink;
    if (!st.ok()) return st;
    bool complete = false;
    auto entries = test::ReadArchive(sink.out, &complete);
    EXPECT_TRUE(complete);
    return entries;
  }

  WorkerPool pool_{16, std::chrono::seconds(1)};  // the fetchers' threads; outlives every batch
  test::TempDir root_;
  std::unique_ptr<Store> store_;
  std::vector<std::string> objs_;
  std::vector<test::Entry> shard_;
};

TEST_F(BatchAssemblerTest, OrderAndBytesMatchTheObjects) {
  std::string json = R"({"in":[)";
  std::vector<int> order;
  for (int k = 0; k < 60; ++k) order.push_back((k * 7) % 20);  // duplicates, out of name order
  for (size_t k = 0; k < order.size(); ++k) json += std::string(k ? "," : "") + R"({"objname":"o)" + std::to_string(order[k]) + R"("})";
  json += "]}";
  test::StringSink sink;
  BatchOptions opts;
  opts.window = 5;
  opts.fetchers = 3;
  auto got = Run(Request(json), ArchiveFormat::kTar, opts, &sink);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ((*got)[k].name, "b/o" + std::to_string(order[k]));
    EXPECT_EQ((*got)[k].data, objs_[static_cast<size_t>(order[k])]) << k;
    EXPECT_GT((*got)[k].mtime, 0);
  }
  EXPECT_GT(sink.files, 0u);  // the big ones went as file segments
}

TEST_F(BatchAssemblerTest, EveryFormat) {
  auto req = Request(R"({"in":[{"objname":"o3"},{"objname":"s.tar","archpath":"x/1.txt"},{"objname":"o0"},{"objname":"other","bucket":"c"}]})");
  for (ArchiveFormat f : {ArchiveFormat::kTar, ArchiveFormat::kTgz, ArchiveFormat::kTarGz, ArchiveFormat::kTarLz4,
                          ArchiveFormat::kZip}) {
    auto got = Run(req, f);
    ASSERT_TRUE(got.ok()) << FormatExtension(f) << ": " << got.status().message();
    ASSERT_EQ(got->size(), 4u) << FormatExtension(f);
    EXPECT_EQ((*got)[0].data, objs_[3]);
    EXPECT_EQ((*got)[1].name, "b/s.tar/x/1.txt");
    EXPECT_EQ((*got)[1].data, "one");
    EXPECT_EQ((*got)[2].data, "");
    EXPECT_EQ((*got)[3].name, "c/other");
    EXPECT_EQ((*got)[3].data, "in bucket c");
  }
}

TEST_F(BatchAssemblerTest, ArchivedFilesAndRanges) {
  const std::string& big = shard_[1].data;
  auto req = Request(
      R"({"onob":true,"in":[{"objname":"s.tar","archpath":"x/2.bin"},{"objname":"s.tgz","archpath":"/x/2.bin","start":5,"length":10},)"
      R"({"objname":"o5","start":100,"length":-1},{"objname":"o5","start":7,"length":3},{"objname":"s.tgz","archpath":"x/1.txt","length":-1}]})");
  BatchOptions opts;
  opts.extract_max = 1000;  // the big archived file is streamed at write time
  for (size_t fetchers : {1, 4}) {
    opts.fetchers = fetchers;
    auto got = Run(req, ArchiveFormat::kTar, opts);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), 5u);
    EXPECT_EQ((*got)[0].name, "s.tar/x/2.bin");
    EXPECT_EQ((*got)[0].data, big);
    EXPECT_EQ((*got)[0].mtime, 0);
    EXPECT_EQ((*got)[1].name, "s.tgz/x/2.bin");  // a leading '/' adds no separator
    EXPECT_EQ((*got)[1].data, big.substr(5, 10));
    EXPECT_EQ((*got)[2].name, "o5");
    EXPECT_EQ((*got)[2].data, objs_[5].substr(100));
    EXPECT_EQ((*got)[2].mtime, 0);
    EXPECT_EQ((*got)[3].data, objs_[5].substr(7, 3));
    EXPECT_EQ((*got)[4].data, "one");
  }
}

TEST_F(BatchAssemblerTest, PlaceholdersWithContinueOnError) {
  auto req = Request(
      R"({"coer":true,"in":[{"objname":"o1"},{"objname":"gone"},{"objname":"gone.tar","archpath":"a"},)"
      R"({"objname":"s.tar","archpath":"x/none"},{"objname":"s.tar","archpath":"/x/none"},{"objname":"o2"}]})");
  std::vector<ItemOutcome> out;
  BatchOptions opts;
  opts.keep_outcomes = true;
  auto got = Run(req, ArchiveFormat::kTar, opts, nullptr, &out);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 6u);
  EXPECT_EQ((*got)[1].name, "__404__/b/gone");
  EXPECT_EQ((*got)[2].name, "__404__/b/gone.tar");  // a missing shard: no archpath
  EXPECT_EQ((*got)[3].name, "__404__/b/s.tar/x/none");
  EXPECT_EQ((*got)[4].name, "__404__/b/s.tar/x/none");
  EXPECT_EQ((*got)[5].data, objs_[2]);
  for (int i : {1, 2, 3, 4}) EXPECT_EQ((*got)[static_cast<size_t>(i)].data, "");
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].size, objs_[1].size());
  EXPECT_EQ(out[0].err_msg, "");
  EXPECT_EQ(out[1].err_msg, "t[test]: ais://b/gone does not exist");
  EXPECT_EQ(out[3].err_msg, "t[test]: x/none in ais://b/s.tar does not exist");
}

TEST_F(BatchAssemblerTest, MissingWithoutContinueOnErrorFails) {
  test::StringSink sink;
  auto got = Run(Request(R"({"in":[{"objname":"o1"},{"objname":"gone"},{"objname":"o2"}]})"), ArchiveFormat::kTar, {}, &sink);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().IsNotFound());
  EXPECT_EQ(got.status().message(), "t[test]: ais://b/gone does not exist");
  bool complete = true;
  auto partial = test::ReadArchive(sink.out, &complete);
  EXPECT_EQ(partial.size(), 1u);  // the first entry, no trailer
}

TEST_F(BatchAssemblerTest, SoftErrorLimit) {
  std::string json = R"({"coer":true,"in":[)";
  for (int i = 0; i < 5; ++i) json += R"({"objname":"gone"},)";
  json += R"({"objname":"o1"}]})";
  BatchOptions opts;
  opts.max_soft_errs = 4;
  auto got = Run(Request(json), ArchiveFormat::kTar, opts);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "get-batch: exceeded soft-errors limit: 5 (max: 4)");
  opts.max_soft_errs = 5;
  EXPECT_TRUE(Run(Request(json), ArchiveFormat::kTar, opts).ok());
  // Over the limit with nothing left to write is still a success.
  opts.max_soft_errs = 4;
  std::string tail_json = R"({"coer":true,"in":[{"objname":"o1"})";
  for (int i = 0; i < 5; ++i) tail_json += R"(,{"objname":"gone"})";
  tail_json += "]}";
  EXPECT_TRUE(Run(Request(tail_json), ArchiveFormat::kTar, opts).ok());
}

TEST_F(BatchAssemblerTest, RangeErrorsAreHardErrors) {
  for (const char* json : {R"({"coer":true,"in":[{"objname":"o1","start":8999,"length":2}]})",
                           R"({"coer":true,"in":[{"objname":"o1","start":9000,"length":-1}]})",
                           R"({"coer":true,"in":[{"objname":"o0","length":-1}]})",
                           R"({"coer":true,"in":[{"objname":"s.tar","archpath":"x/1.txt","start":3,"length":1}]})"}) {
    auto got = Run(Request(json));
    ASSERT_FALSE(got.ok()) << json;
    EXPECT_EQ(got.status().code(), Status::Code::kInvalidArgument) << json;
    EXPECT_NE(got.status().message().find("not satisfiable range"), std::string::npos) << got.status().message();
  }
}

TEST_F(BatchAssemblerTest, NotAnArchiveIsAHardError) {
  auto got = Run(Request(R"({"coer":true,"in":[{"objname":"o3","archpath":"x"}]})"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kInvalidArgument);
}

TEST_F(BatchAssemblerTest, ObjectsReadWithTheirHeaderOrNot) {
  // Whole objects are read with their header into a buffer sized like the previous one: equal,
  // smaller and bigger sizes, one whose data starts past the first block (long metadata), a
  // chunked one and ranges must all come back byte for byte.
  auto put = [&](const std::string& name, const std::string& data, PutOptions opts) {
    opts.size = data.size();
    auto w = store_->BeginPut("b", name, opts);
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE((*w)->Write(data.data(), data.size()).ok());
    ObjectMeta meta;
    ASSERT_TRUE((*w)->Commit(&meta).ok());
  };
  std::map<std::string, std::string> objs;
  for (auto [name, size] : {std::pair<const char*, size_t>{"a", 5000}, {"b", 5000}, {"c", 3000}, {"d", 7000},
                            {"e", 0}, {"f", 65536}}) {
    objs[name] = test::Bytes(size, static_cast<uint32_t>(size));
    put(name, objs[name], {});
  }
  PutOptions long_meta;
  long_meta.custom.emplace_back("big", std::string(6000, 'v'));  // data at 8 KiB or beyond
  objs["long"] = test::Bytes(4000, 77);
  put("long", objs["long"], long_meta);
  PutOptions chunked;
  chunked.force_chunk_size = 1500;
  objs["chunked"] = test::Bytes(4500, 78);
  put("chunked", objs["chunked"], chunked);
  const std::vector<std::string> order = {"a", "b", "c", "d", "b", "long", "a", "chunked", "a", "e", "a", "f", "d"};
  std::string json = R"({"in":[)";
  for (size_t k = 0; k < order.size(); ++k) json += std::string(k ? "," : "") + R"({"objname":")" + order[k] + R"("})";
  json += R"(,{"objname":"a","start":10,"length":20},{"objname":"chunked","start":1000,"length":1000}]})";
  auto got = Run(Request(json));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), order.size() + 2);
  for (size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ((*got)[k].name, "b/" + order[k]) << k;
    EXPECT_EQ((*got)[k].data, objs[order[k]]) << k << " " << order[k];
  }
  EXPECT_EQ((*got)[order.size()].data, objs["a"].substr(10, 20));
  EXPECT_EQ((*got)[order.size() + 1].data, objs["chunked"].substr(1000, 1000));
}

TEST_F(BatchAssemblerTest, CancelStopsBeforeTheNextItem) {
  auto req = Request(R"({"in":[{"objname":"o1"},{"objname":"o2"}]})");
  BatchAssembler a(*store_, req, ArchiveFormat::kTar, {});
  a.Cancel();
  test::StringSink sink;
  EXPECT_FALSE(a.Run(&sink).ok());
  EXPECT_TRUE(sink.out.empty());
}

}  // namespace
}  // namespace ais
