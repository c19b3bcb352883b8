// ArchiveFormat: the archive formats GetBatch writes and archived reads understand, and how a
// format is named on the wire (getbatch.md §3, §7): `mime` normalization, object-name suffixes,
// magic bytes, streaming Content-Type.
#pragma once

#include <optional>
#include <string_view>

#include "util/status.h"

namespace ais {

enum class ArchiveFormat { kTar, kTgz, kTarGz, kTarLz4, kZip };

// Canonical extension: ".tar", ".tgz", ".tar.gz", ".tar.lz4", ".zip".
std::string_view FormatExtension(ArchiveFormat f);
// Content-Type of a streamed archive (never a Content-Encoding).
std::string_view FormatContentType(ArchiveFormat f);
// True for the gzip-compressed tar formats (.tgz and .tar.gz are one format).
inline bool IsGzipTar(ArchiveFormat f) { return f == ArchiveFormat::kTgz || f == ArchiveFormat::kTarGz; }

// The request's `mime` as AIS normalizes it: "" -> .tar; a case-sensitive substring test
// ("application/x-tar", "tgz", ".tar.lz4", ...). Unknown -> kInvalidArgument `unknown mime type "<v>"`.
Result<ArchiveFormat> ParseArchiveMime(std::string_view mime);
// The format an object name's suffix announces, if any.
std::optional<ArchiveFormat> FormatFromName(std::string_view name);
// The format the first bytes reveal (tar needs 512 bytes for the "ustar" magic at 257).
std::optional<ArchiveFormat> FormatFromMagic(std::string_view head);

}  // namespace ais
