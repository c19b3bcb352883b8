// Tar headers we write, read back by libarchive and by our own TarScanner.
#include "archive/tar_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "archive/archive_test_util.h"
#include "archive/tar_scanner.h"

namespace ais {
namespace {

std::vector<TarEntry> Scan(const std::string& tar) {
  TarScanner sc(
      [&](uint64_t off, void* buf, size_t len) {
        if (off + len > tar.size()) return Status::Corruption("short");
        std::memcpy(buf, tar.data() + off, len);
        return Status::OK();
      },
      tar.size());
  std::vector<TarEntry> out;
  for (;;) {
    TarEntry e;
    auto more = sc.Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    out.push_back(e);
  }
  return out;
}

TEST(TarHeader, UstarFields) {
  std::string h = EncodeTarHeader("bck/obj", 1234, 1700000000);
  ASSERT_EQ(h.size(), kTarBlock);
  EXPECT_EQ(h.substr(0, 8), std::string("bck/obj\0", 8));
  EXPECT_EQ(h.substr(100, 8), std::string("0000644\0", 8));
  EXPECT_EQ(h.substr(108, 8), std::string("0000000\0", 8));
  EXPECT_EQ(h.substr(124, 12), std::string("00000002322\0", 12));
  EXPECT_EQ(h[156], '0');
  EXPECT_EQ(h.substr(257, 8), std::string("ustar\0" "00", 8));
  EXPECT_EQ(h.substr(265, 64), std::string(64, '\0'));  // empty uname and gname
}

TEST(TarHeader, ChecksumCountsEveryByte) {
  // The sum of the block's bytes (unsigned), the checksum field counted as eight spaces.
  std::string split = std::string(120, '\xe4') + "/";  // bytes above 127 in prefix and name
  while (split.size() < 121 + 90) split += "\xc3\xa9";
  for (const std::string& name : {std::string("bck/obj"), std::string("dir/\xc3\xa9t\xc3\xa9.txt"), split}) {
    for (uint64_t size : {uint64_t{0}, uint64_t{1234}, uint64_t{077777777777}}) {
      std::string h = EncodeTarHeader(name, size, 1700000000);
      ASSERT_EQ(h.size(), kTarBlock) << name;
      unsigned sum = 0;
      for (size_t i = 0; i < kTarBlock; ++i) sum += i >= 148 && i < 156 ? ' ' : static_cast<unsigned char>(h[i]);
      EXPECT_EQ(std::stoul(h.substr(148, 6), nullptr, 8), sum) << name << " " << size;
      EXPECT_EQ(h.substr(154, 2), std::string("\0 ", 2));
    }
  }
}

TEST(TarHeader, NamesOfEveryLength) {
  std::vector<test::Entry> entries;
  std::string split_dir(120, 'd');
  entries.push_back({"short", "x", 5});
  entries.push_back({std::string(100, 'n'), "exactly 100", 6});
  entries.push_back({split_dir + "/" + std::string(90, 'f'), "prefix+name", 7});  // fits USTAR split
  entries.push_back({std::string(300, 'p'), "pax", 8});                        // needs PAX
  entries.push_back({split_dir + "/" + std::string(120, 'f'), "pax too", 9});   // rest > 100
  entries.push_back({"dir/\xc3\xa9t\xc3\xa9.txt", "utf-8", 10});
  entries.push_back({"empty", "", 11});
  std::string tar = test::BuildArchive(ArchiveFormat::kTar, entries);
  EXPECT_EQ(tar.size() % kTarBlock, 0u);
  bool complete = false;
  auto got = test::ReadArchive(tar, &complete);
  EXPECT_TRUE(complete);
  ASSERT_EQ(got.size(), entries.size());
  auto scanned = Scan(tar);
  ASSERT_EQ(scanned.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(got[i].name, entries[i].name) << i;
    EXPECT_EQ(got[i].data, entries[i].data) << i;
    EXPECT_EQ(got[i].mtime, entries[i].mtime) << i;
    EXPECT_TRUE(got[i].regular);
    EXPECT_EQ(scanned[i].name, entries[i].name) << i;
    EXPECT_EQ(scanned[i].size, entries[i].data.size()) << i;
    EXPECT_TRUE(scanned[i].regular);
    EXPECT_EQ(tar.substr(scanned[i].offset, scanned[i].size), entries[i].data) << i;
  }
}

TEST(TarHeader, UstarHeaderInPlaceIsTheSameBlock) {
  std::string split_dir(120, 'd');
  for (const std::string& name : {std::string("short"), std::string(100, 'n'), split_dir + "/" + std::string(90, 'f')}) {
    std::string block(kTarBlock, 'x');  // garbage: every byte is written
    ASSERT_TRUE(EncodeUstarHeader(name, 1234, 1700000000, block.data())) << name;
    EXPECT_EQ(block, EncodeTarHeader(name, 1234, 1700000000)) << name;
  }
  for (const std::string& name : {std::string(300, 'p'), split_dir + "/" + std::string(120, 'f')}) {
    std::string block(kTarBlock, 'x');
    EXPECT_FALSE(EncodeUstarHeader(name, 1, 0, block.data()));
    EXPECT_EQ(block, std::string(kTarBlock, 'x'));  // untouched
  }
  std::string block(kTarBlock, 'x');
  EXPECT_FALSE(EncodeUstarHeader("big", 10ULL << 30, 0, block.data()));
}

TEST(TarHeader, HugeSizeGoesToPax) {
  const uint64_t size = 10ULL << 30;
  std::string h = EncodeTarHeader("big", size, 0);
  EXPECT_GT(h.size(), kTarBlock);
  const uint64_t total = h.size() + size + TarPadding(size) + kTarTrailer;
  TarScanner sc(
      [&](uint64_t off, void* buf, size_t len) {
        for (size_t i = 0; i < len; ++i) static_cast<char*>(buf)[i] = off + i < h.size() ? h[off + i] : '\0';
        return Status::OK();
      },
      total);
  TarEntry e;
  auto more = sc.Next(&e);
  ASSERT_TRUE(more.ok()) << more.status().message();
  ASSERT_TRUE(*more);
  EXPECT_EQ(e.name, "big");
  EXPECT_EQ(e.size, size);
  EXPECT_EQ(e.offset, h.size());
  more = sc.Next(&e);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

TEST(TarScanner, DamageIsCorruption) {
  std::string tar = test::BuildArchive(ArchiveFormat::kTar, {{"a", "data", 0}});
  tar[10] ^= 1;  // breaks the checksum
  TarScanner sc(
      [&](uint64_t off, void* buf, size_t len) {
        std::memcpy(buf, tar.data() + off, len);
        return Status::OK();
      },
      tar.size());
  TarEntry e;
  auto more = sc.Next(&e);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), Status::Code::kCorruption);
}

TEST(TarScanner, TruncatedArchiveEnds) {
  std::string tar = test::BuildArchive(ArchiveFormat::kTar, {{"a", std::string(1000, 'x'), 0}});
  auto cut = tar.substr(0, 600);  // header and part of the data
  TarScanner sc(
      [&](uint64_t off, void* buf, size_t len) {
        std::memcpy(buf, cut.data() + off, len);
        return Status::OK();
      },
      cut.size());
  TarEntry e;
  auto more = sc.Next(&e);
  EXPECT_FALSE(more.ok());
}

}  // namespace
}  // namespace ais
