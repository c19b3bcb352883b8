#include "archive/archive_format.h"

#include <gtest/gtest.h>

#include <string>

namespace ais {
namespace {

ArchiveFormat Mime(std::string_view m) {
  auto r = ParseArchiveMime(m);
  EXPECT_TRUE(r.ok()) << m << ": " << r.status().message();
  return *r;
}

TEST(ArchiveFormat, MimeNormalization) {
  EXPECT_EQ(Mime(""), ArchiveFormat::kTar);
  EXPECT_EQ(Mime(".tar"), ArchiveFormat::kTar);
  EXPECT_EQ(Mime("tar"), ArchiveFormat::kTar);
  EXPECT_EQ(Mime("application/x-tar"), ArchiveFormat::kTar);
  EXPECT_EQ(Mime(".tgz"), ArchiveFormat::kTgz);
  EXPECT_EQ(Mime("tgz"), ArchiveFormat::kTgz);
  EXPECT_EQ(Mime(".tar.gz"), ArchiveFormat::kTarGz);
  EXPECT_EQ(Mime("application/tar.gz"), ArchiveFormat::kTarGz);
  EXPECT_EQ(Mime(".tar.lz4"), ArchiveFormat::kTarLz4);
  EXPECT_EQ(Mime(".zip"), ArchiveFormat::kZip);
  EXPECT_EQ(Mime("application/zip"), ArchiveFormat::kZip);
}

TEST(ArchiveFormat, UnknownMimeIsInvalidArgument) {
  for (std::string_view m : {".rar", "ZIP", ".TAR", "gz", "lz4", "x"}) {
    auto r = ParseArchiveMime(m);
    ASSERT_FALSE(r.ok()) << m;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "unknown mime type \"" + std::string(m) + "\"");
  }
}

TEST(ArchiveFormat, ExtensionsAndContentTypes) {
  EXPECT_EQ(FormatExtension(ArchiveFormat::kTarLz4), ".tar.lz4");
  EXPECT_EQ(FormatContentType(ArchiveFormat::kTar), "application/x-tar");
  EXPECT_EQ(FormatContentType(ArchiveFormat::kTgz), "application/gzip");
  EXPECT_EQ(FormatContentType(ArchiveFormat::kTarGz), "application/gzip");
  EXPECT_EQ(FormatContentType(ArchiveFormat::kTarLz4), "application/x-lz4");
  EXPECT_EQ(FormatContentType(ArchiveFormat::kZip), "application/zip");
}

TEST(ArchiveFormat, FromName) {
  EXPECT_EQ(FormatFromName("a/b.tar"), ArchiveFormat::kTar);
  EXPECT_EQ(FormatFromName("b.tar.gz"), ArchiveFormat::kTarGz);
  EXPECT_EQ(FormatFromName("b.tgz"), ArchiveFormat::kTgz);
  EXPECT_EQ(FormatFromName("b.tar.lz4"), ArchiveFormat::kTarLz4);
  EXPECT_EQ(FormatFromName("b.zip"), ArchiveFormat::kZip);
  EXPECT_FALSE(FormatFromName("b.gz"));
  EXPECT_FALSE(FormatFromName("tar"));
}

TEST(ArchiveFormat, FromMagic) {
  std::string tar(512, '\0');
  tar.replace(257, 5, "ustar");
  EXPECT_EQ(FormatFromMagic(tar), ArchiveFormat::kTar);
  EXPECT_FALSE(FormatFromMagic(tar.substr(0, 300)));  // too short to tell
  EXPECT_EQ(FormatFromMagic("\x1f\x8b\x08"), ArchiveFormat::kTarGz);
  EXPECT_EQ(FormatFromMagic("PK\x03\x04"), ArchiveFormat::kZip);
  EXPECT_EQ(FormatFromMagic(std::string_view("\x04\x22\x4d\x18\x60", 5)), ArchiveFormat::kTarLz4);
  EXPECT_FALSE(FormatFromMagic("hello"));
}

}  // namespace
}  // namespace ais
