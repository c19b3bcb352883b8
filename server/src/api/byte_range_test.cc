// Range header rules of rest-core.md §4 (AIS ais/utils.go parseMultiRange, single range only).
#include "api/byte_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>

namespace ais {
namespace {

void ExpectRange(std::string_view header, uint64_t size, uint64_t start, uint64_t length) {
  auto r = ParseByteRange(header, size);
  ASSERT_TRUE(r.ok()) << header << " size " << size << ": " << r.status().message();
  EXPECT_EQ(r->start, start) << header << " size " << size;
  EXPECT_EQ(r->length, length) << header << " size " << size;
}

void Expect416(std::string_view header, uint64_t size) {
  auto r = ParseByteRange(header, size);
  ASSERT_FALSE(r.ok()) << header << " size " << size << " gave [" << r->start << ", +" << r->length << ")";
  EXPECT_EQ(r.status().code(), Status::Code::kRangeNotSatisfiable) << header << ": " << r.status().message();
}

TEST(ParseByteRange, StartEnd) {
  ExpectRange("bytes=0-0", 10, 0, 1);
  ExpectRange("bytes=0-9", 10, 0, 10);
  ExpectRange("bytes=2-5", 10, 2, 4);
  ExpectRange("bytes=9-9", 10, 9, 1);
}

TEST(ParseByteRange, EndIsClippedToLastByte) {
  ExpectRange("bytes=0-10", 10, 0, 10);
  ExpectRange("bytes=5-1000000", 10, 5, 5);
  ExpectRange("bytes=9-18446744073709551615", 10, 9, 1);
}

TEST(ParseByteRange, OpenEnded) {
  ExpectRange("bytes=0-", 10, 0, 10);
  ExpectRange("bytes=3-", 10, 3, 7);
  ExpectRange("bytes=9-", 10, 9, 1);
}

TEST(ParseByteRange, Suffix) {
  ExpectRange("bytes=-1", 10, 9, 1);
  ExpectRange("bytes=-4", 10, 6, 4);
  ExpectRange("bytes=-10", 10, 0, 10);
  ExpectRange("bytes=-11", 10, 0, 10);  // more than the object: the whole object
  ExpectRange("bytes=-18446744073709551615", 10, 0, 10);
}

TEST(ParseByteRange, SuffixOfZeroBytesIs416) { Expect416("bytes=-0", 10); }  // §18.5: we answer 416

TEST(ParseByteRange, EndBeforeStartIs416) {
  Expect416("bytes=5-4", 10);
  Expect416("bytes=1-0", 10);
}

TEST(ParseByteRange, StartAtOrBeyondSizeIs416) {
  Expect416("bytes=10-", 10);
  Expect416("bytes=10-20", 10);
  Expect416("bytes=11-12", 10);
  Expect416("bytes=18446744073709551615-", 10);
}

TEST(ParseByteRange, AnyRangeOnEmptyObjectIs416) {
  for (const char* h : {"bytes=0-", "bytes=0-0", "bytes=0-100", "bytes=-1", "bytes=-100", "bytes=-0"}) Expect416(h, 0);
}

TEST(ParseByteRange, MultiRangeIs416) {
  for (const char* h : {"bytes=0-1,2-3", "bytes=0-1,5-", "bytes=-1,-2", "bytes=0-0,0-0"}) {
    Expect416(h, 100);
    EXPECT_NE(ParseByteRange(h, 100).status().message().find("multi-range"), std::string::npos) << h;
  }
}

TEST(ParseByteRange, MissingBytesPrefixIs416) {
  for (const char* h : {"", "0-1", "bytes", "bytes:0-1", "bytes 0-1", "Bytes=0-1", "BYTES=0-1", "items=0-1",
                        " bytes=0-1"}) {
    Expect416(h, 100);
  }
}

TEST(ParseByteRange, GarbageNumbersAre416) {
  for (const char* h : {"bytes=", "bytes=-", "bytes=5", "bytes=a-b", "bytes=1-b", "bytes=a-1", "bytes=-b",
                        "bytes=--1", "bytes=1--2", "bytes=1-2-3", "bytes=+1-2", "bytes=1-+2", "bytes=-+2",
                        "bytes=0x1-2", "bytes=1.5-2", "bytes=1-2.5", "bytes=1e2-", "bytes=18446744073709551616-",
                        "bytes=0-18446744073709551616", "bytes=-18446744073709551616", "bytes=1 - 2"}) {
    Expect416(h, 100);
  }
}

TEST(ParseByteRange, SurroundingSpacesAreTrimmed) {
  ExpectRange("bytes= 1-2", 10, 1, 2);
  ExpectRange("bytes=1-2 ", 10, 1, 2);
  ExpectRange("bytes= -3 ", 10, 7, 3);
}

// The rules restated as plainly as possible, over wide ranges of sizes and positions.
std::optional<ByteRange> Reference(uint64_t size, std::optional<uint64_t> s, std::optional<uint64_t> e) {
  if (!s) {  // suffix "-N" (N in e)
    if (*e == 0 || size == 0) return std::nullopt;
    uint64_t n = std::min(*e, size);
    return ByteRange{size - n, n};
  }
  if (*s >= size) return std::nullopt;
  uint64_t last = size - 1;
  if (e) {
    if (*e < *s) return std::nullopt;
    last = std::min(*e, size - 1);
  }
  return ByteRange{*s, last - *s + 1};
}

TEST(ParseByteRange, AgreesWithReference) {
  std::mt19937_64 rng(2024);
  auto pick = [&](uint64_t size) -> uint64_t {
    switch (rng() % 6) {
      case 0: return 0;
      case 1: return size;
      case 2: return size == 0 ? 0 : size - 1;
      case 3: return size + 1;
      case 4: return rng() % (size + 3);
      default: return rng() >> (rng() % 64);
    }
  };
  int checked = 0;
  for (int i = 0; i < 50000; ++i) {
    uint64_t size = i < 1000 ? static_cast<uint64_t>(i % 40) : (rng() >> (rng() % 64));
    std::optional<uint64_t> s = pick(size), e = pick(size);
    std::string header = "bytes=";
    switch (rng() % 3) {
      case 0: header += std::to_string(*s) + "-" + std::to_string(*e); break;
      case 1: header += std::to_string(*s) + "-"; e.reset(); break;
      default: header += "-" + std::to_string(*e); s.reset(); break;
    }
    auto want = Reference(size, s, e);
    auto got = ParseByteRange(header, size);
    ASSERT_EQ(got.ok(), want.has_value()) << header << " size " << size;
    if (want) {
      ASSERT_EQ(got->start, want->start) << header << " size " << size;
      ASSERT_EQ(got->length, want->length) << header << " size " << size;
      ASSERT_GE(got->length, 1u);
      ASSERT_LE(got->start + got->length, size);
      ++checked;
    } else {
      ASSERT_EQ(got.status().code(), Status::Code::kRangeNotSatisfiable);
    }
  }
  EXPECT_GT(checked, 10000);  // the generator really exercises satisfiable ranges
}

}  // namespace
}  // namespace ais
