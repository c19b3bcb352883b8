#include "archive/archive_format.h"

#include <array>
#include <string>

namespace ais {
namespace {

struct FormatName {
  ArchiveFormat format;
  std::string_view ext;
};
// The order of AIS's lookup: the first whose extension (without its dot) occurs wins.
constexpr std::array<FormatName, 5> kFormats = {{{ArchiveFormat::kTar, ".tar"},
                                                 {ArchiveFormat::kTgz, ".tgz"},
                                                 {ArchiveFormat::kTarGz, ".tar.gz"},
                                                 {ArchiveFormat::kZip, ".zip"},
                                                 {ArchiveFormat::kTarLz4, ".tar.lz4"}}};

}  // namespace

std::string_view FormatExtension(ArchiveFormat f) {
  for (const auto& n : kFormats) {
    if (n.format == f) return n.ext;
  }
  return ".tar";
}

std::string_view FormatContentType(ArchiveFormat f) {
  switch (f) {
    case ArchiveFormat::kTar: return "application/x-tar";
    case ArchiveFormat::kTgz:
    case ArchiveFormat::kTarGz: return "application/gzip";
    case ArchiveFormat::kTarLz4: return "application/x-lz4";
    case ArchiveFormat::kZip: return "application/zip";
  }
  return "application/octet-stream";
}

Result<ArchiveFormat> ParseArchiveMime(std::string_view mime) {
  if (mime.empty()) return ArchiveFormat::kTar;
  if (mime.find("tar.gz") != std::string_view::npos) return ArchiveFormat::kTarGz;
  if (mime.find("tar.lz4") != std::string_view::npos) return ArchiveFormat::kTarLz4;
  for (const auto& n : kFormats) {
    if (mime.find(n.ext.substr(1)) != std::string_view::npos) return n.format;
  }
  return Status::InvalidArgument("unknown mime type \"" + std::string(mime) + "\"");
}

std::optional<ArchiveFormat> FormatFromName(std::string_view name) {
  // Longest suffixes first: ".tar.gz" must not be taken for ".gz"-less ".tar".
  if (name.ends_with(".tar.gz")) return ArchiveFormat::kTarGz;
  if (name.ends_with(".tar.lz4")) return ArchiveFormat::kTarLz4;
  if (name.ends_with(".tgz")) return ArchiveFormat::kTgz;
  if (name.ends_with(".tar")) return ArchiveFormat::kTar;
  if (name.ends_with(".zip")) return ArchiveFormat::kZip;
  return std::nullopt;
}

std::optional<ArchiveFormat> FormatFromMagic(std::string_view head) {
  if (head.size() >= 512 && head.substr(257, 5) == "ustar") return ArchiveFormat::kTar;
  if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b') return ArchiveFormat::kTarGz;
  if (head.size() >= 2 && head[0] == 'P' && head[1] == 'K') return ArchiveFormat::kZip;
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("\x04\x22\x4d\x18", 4)) return ArchiveFormat::kTarLz4;
  return std::nullopt;
}

}  // namespace ais
