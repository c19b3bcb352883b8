// TarWriter: an entry written in place is byte for byte the entry WriteEntry writes.
#include "archive/tar_writer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "archive/archive_test_util.h"

namespace ais {
namespace {

std::string Written(std::string_view name, const std::string& data, bool in_place) {
  test::StringSink sink;
  TarWriter w(&sink);
  if (in_place) {
    ByteBuffer buf(ArchiveWriter::InPlaceSize(data.size()));
    std::memset(buf.data(), 'x', buf.size());  // head and padding: garbage
    if (!data.empty()) std::memcpy(buf.data() + ArchiveWriter::kInPlaceHead, data.data(), data.size());
    EXPECT_TRUE(w.WriteEntryInPlace(name, std::move(buf), data.size(), 1700000000).ok());
  } else {
    EXPECT_TRUE(w.WriteEntry(name, data, 1700000000).ok());
  }
  EXPECT_TRUE(w.Finish().ok());
  return sink.out;
}

TEST(TarWriter, InPlaceEntriesEqualCopiedOnes) {
  const std::string long_name = "b/" + std::string(300, 'n');  // needs a PAX header: copied
  for (std::string_view name : {std::string_view("a/b.txt"), std::string_view(long_name)}) {
    for (size_t size : {0, 1, 511, 512, 513, 10240}) {
      std::string data(size, '\0');
      for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>('a' + i % 26);
      EXPECT_EQ(Written(name, data, true), Written(name, data, false)) << name.size() << " " << size;
    }
  }
}

}  // namespace
}  // namespace ais
