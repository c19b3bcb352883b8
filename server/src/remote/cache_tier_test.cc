// The part size of a write-through upload: S3's limits (parts of 5 MiB to 5 GiB, at most 10000).
#include "remote/cache_tier.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

TEST(MultipartPartSizeTest, SinglePutUpToThePartSize) {
  EXPECT_EQ(MultipartPartSize(0, kDefaultMultipartSize), 0u);
  EXPECT_EQ(MultipartPartSize(0, kDefaultMultipartSize + 1), kDefaultMultipartSize);
  EXPECT_EQ(MultipartPartSize(5 << 20, 5 << 20), 0u);
  EXPECT_EQ(MultipartPartSize(5 << 20, (5 << 20) + 1), uint64_t{5} << 20);
}

TEST(MultipartPartSizeTest, NeverWhenDisabled) { EXPECT_EQ(MultipartPartSize(-1, uint64_t{1} << 40), 0u); }

TEST(MultipartPartSizeTest, LargeObjectsGetLargerPartsWithinTenThousand) {
  const uint64_t size = uint64_t{5} << 40;  // 5 TiB: S3's largest object
  const uint64_t part = MultipartPartSize(5 << 20, size);
  EXPECT_GT(part, uint64_t{5} << 20);
  EXPECT_LE((size + part - 1) / part, 10'000u);
}

}  // namespace
}  // namespace ais
