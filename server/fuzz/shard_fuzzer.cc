// The input is an archived object: its first byte picks the object's name suffix (.tar, .tgz,
// .tar.gz, .tar.lz4, .zip or none, leaving the format to the magic bytes) and whether the store
// keeps it monolithic or in 1 KiB chunks; the rest is the object's content. It is put into a
// Store on a temporary directory and read as GetBatch and list-objects read shards:
// Shard::Open (TarShard, or LibarchiveShard over libarchive), ForEach, Find and Read of the
// members (archive/shard.h), and ListWithArchives (archive/arch_dir.h).
//
// Properties: every member ForEach lists is found by Find, with the size of the first member of
// that name; a Read delivers exactly the bytes asked for or fails; a tar member's bytes lie in
// the object; the listing is in name order.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "archive/arch_dir.h"
#include "archive/shard.h"
#include "fuzz_check.h"
#include "store/store.h"

namespace {

constexpr const char* kSuffixes[] = {".tar", ".tgz", ".tar.gz", ".tar.lz4", ".zip", ""};
constexpr size_t kMaxMembers = 32;
constexpr uint64_t kMaxRead = 64 << 10;

// A store on a fresh temporary directory, removed at exit (a crash leaves it for the OS).
struct Env {
  Env() {
    const char* base = std::getenv("TMPDIR");
    dir = std::string(base && *base ? base : "/tmp") + "/ais_fuzz_shard_XXXXXX";
    FUZZ_CHECK(mkdtemp(dir.data()) != nullptr);
    ais::StoreOptions opts;
    opts.mountpaths = {dir + "/mp1", dir + "/mp2"};
    auto s = ais::Store::Open(opts);
    FUZZ_CHECK(s.ok());
    store = std::move(*s);
    FUZZ_CHECK(store->CreateBucket("m", nullptr).ok());
    auto chunked = nlohmann::json::parse(R"({"chunks":{"objsize_limit":"1KiB","chunk_size":"1KiB"}})");
    FUZZ_CHECK(store->CreateBucket("c", chunked).ok());
  }
  ~Env() {
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string dir;
  std::unique_ptr<ais::Store> store;
};

ais::Store& TheStore() {
  static Env env;
  return *env.store;
}

void Put(ais::Store& store, const std::string& bucket, const std::string& name, const uint8_t* data, size_t size) {
  ais::PutOptions opts;
  opts.size = size;
  auto w = store.BeginPut(bucket, name, opts);
  FUZZ_CHECK(w.ok());
  FUZZ_CHECK((*w)->Write(data, size).ok());
  ais::ObjectMeta meta;
  FUZZ_CHECK((*w)->Commit(&meta).ok());
}

void ReadShard(ais::Store& store, const std::string& bucket, const std::string& name) {
  auto obj = store.OpenShared(bucket, name);
  FUZZ_CHECK(obj.ok());
  uint64_t obj_size = (*obj)->size();
  auto shard = ais::Shard::Open(*obj, name, std::nullopt);
  if (!shard.ok()) return;
  std::vector<ais::Shard::Member> members;
  ais::Status st = (*shard)->ForEach([&](const ais::Shard::Member& m) {
    if (members.size() < kMaxMembers) members.push_back(m);
    return ais::Status::OK();
  });
  if (!st.ok()) return;
  std::set<std::string> seen;
  for (const auto& m : members) {
    if (m.offset) FUZZ_CHECK(*m.offset <= obj_size && m.size <= obj_size - *m.offset);
    auto found = (*shard)->Find(m.name);
    if (!found.ok()) {
      // A compressed stream may turn out damaged only on this second pass's data reads.
      FUZZ_CHECK(found.status().code() == ais::Status::Code::kCorruption);
      continue;
    }
    bool first = seen.insert(std::string(ais::Shard::Key(m.name))).second;
    if (first) FUZZ_CHECK(found->size == m.size);
    uint64_t want = std::min(found->size, kMaxRead);
    uint64_t start = want / 3;
    uint64_t got = 0;
    st = (*shard)->Read(m.name, start, want - start, [&](const char*, size_t n) {
      got += n;
      return ais::Status::OK();
    });
    if (st.ok() && got != want - start) {
      std::fprintf(stderr, "member \"%s\" (size %llu): Read(%llu, %llu) gave %llu bytes\n", m.name.c_str(),
                   static_cast<unsigned long long>(found->size), static_cast<unsigned long long>(start),
                   static_cast<unsigned long long>(want - start), static_cast<unsigned long long>(got));
      FUZZ_CHECK(got == want - start);
    }
  }
  FUZZ_CHECK(!(*shard)->Find("no/such/member").ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  ais::Store& store = TheStore();
  std::string name = std::string("shard") + kSuffixes[data[0] % 6];
  std::string bucket = (data[0] / 6) % 2 ? "c" : "m";
  Put(store, bucket, name, data + 1, size - 1);
  ReadShard(store, bucket, name);

  ais::ListQuery q;
  q.limit = 64;
  auto listed = ais::ListWithArchives(store, bucket, q);
  FUZZ_CHECK(listed.ok());
  for (size_t i = 1; i < listed->size(); ++i) FUZZ_CHECK((*listed)[i - 1].meta.name <= (*listed)[i].meta.name);
  FUZZ_CHECK(store.Delete(bucket, name).ok());
  return 0;
}
