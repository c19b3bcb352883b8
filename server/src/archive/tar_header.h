// The tar header of one regular-file entry, as GetBatch writes it (getbatch.md §3): typeflag '0',
// mode 0644, uid/gid 0, empty uname/gname. USTAR when the name fits USTAR's name and prefix
// fields and the size its 11 octal digits; otherwise a PAX extended header ('x') carrying `path`
// and/or `size` comes first. Entry data follows, padded to kTarBlock; two zero blocks end the archive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ais {

inline constexpr size_t kTarBlock = 512;
inline constexpr size_t kTarTrailer = 2 * kTarBlock;

inline uint64_t TarPadding(uint64_t size) { return (kTarBlock - size % kTarBlock) % kTarBlock; }

// The header block(s) for an entry: a multiple of kTarBlock bytes.
std::string EncodeTarHeader(std::string_view name, uint64_t size, int64_t mtime_sec);
// The same written into block[0, kTarBlock) when it is one USTAR block (no PAX header); false,
// and nothing written, otherwise.
bool EncodeUstarHeader(std::string_view name, uint64_t size, int64_t mtime_sec, char* block);

}  // namespace ais
