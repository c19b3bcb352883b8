#include "archive/tar_header.h"

#include <algorithm>
#include <cstring>

namespace ais {
namespace {

constexpr uint64_t kMaxOctal11 = 077777777777ULL;  // 8 GiB - 1
constexpr size_t kNameLen = 100;
constexpr size_t kPrefixLen = 155;

// Field offsets of the USTAR header.
constexpr size_t kOffName = 0, kOffMode = 100, kOffUid = 108, kOffGid = 116, kOffSize = 124, kOffMtime = 136,
                 kOffChksum = 148, kOffType = 156, kOffMagic = 257, kOffVersion = 263, kOffDevMajor = 329,
                 kOffDevMinor = 337, kOffPrefix = 345;

// `width`-1 zero-padded octal digits and a NUL, by hand (snprintf costs too much per small
// entry). REQUIRES: v fits in width-1 digits.
void PutOctal(char* field, size_t width, uint64_t v) {
  field[width - 1] = '\0';
  for (size_t i = width - 1; i > 0; --i, v >>= 3) field[i - 1] = static_cast<char>('0' + (v & 7));
}

void PutString(char* field, std::string_view s) {
  if (!s.empty()) std::memcpy(field, s.data(), s.size());
}

// Writes one USTAR header block into h[0, kTarBlock).
void PutUstarBlock(char* h, std::string_view name, std::string_view prefix, uint64_t size, int64_t mtime, char type) {
  std::memset(h, 0, kTarBlock);
  PutString(h + kOffName, name.substr(0, kNameLen));
  PutOctal(h + kOffMode, 8, 0644);
  PutOctal(h + kOffUid, 8, 0);
  PutOctal(h + kOffGid, 8, 0);
  PutOctal(h + kOffSize, 12, size);
  PutOctal(h + kOffMtime, 12, static_cast<uint64_t>(mtime));
  h[kOffType] = type;
  PutString(h + kOffMagic, std::string_view("ustar\0", 6));
  PutString(h + kOffVersion, "00");
  PutOctal(h + kOffDevMajor, 8, 0);
  PutOctal(h + kOffDevMinor, 8, 0);
  PutString(h + kOffPrefix, prefix.substr(0, kPrefixLen));
  std::memset(h + kOffChksum, ' ', 8);
  unsigned sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) sum += static_cast<unsigned char>(h[i]);
  PutOctal(h + kOffChksum, 7, sum);  // six digits, NUL, and the space already there
}

std::string UstarBlock(std::string_view name, std::string_view prefix, uint64_t size, int64_t mtime, char type) {
  std::string b(kTarBlock, '\0');
  PutUstarBlock(b.data(), name, prefix, size, mtime, type);
  return b;
}

uint64_t ClampMtime(int64_t mtime_sec) {
  return mtime_sec < 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(mtime_sec), kMaxOctal11);
}

// Splits `name` at a '/' into USTAR prefix and name fields; false if no split fits.
bool SplitUstar(std::string_view name, std::string_view* prefix, std::string_view* rest) {
  if (name.size() <= kNameLen) {
    *prefix = {};
    *rest = name;
    return true;
  }
  if (name.size() > kPrefixLen + 1 + kNameLen) return false;
  for (size_t i = name.size() - 1; i > 0; --i) {
    if (name[i] != '/') continue;
    if (i > kPrefixLen) continue;
    if (name.size() - i - 1 > kNameLen) return false;  // moving left only makes the rest longer
    if (i + 1 == name.size()) return false;
    *prefix = name.substr(0, i);
    *rest = name.substr(i + 1);
    return true;
  }
  return false;
}

// One PAX record: "<len> <key>=<value>\n", where <len> counts the whole record.
std::string PaxRecord(std::string_view key, std::string_view value) {
  size_t body = 1 + key.size() + 1 + value.size() + 1;
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

}  // namespace

bool EncodeUstarHeader(std::string_view name, uint64_t size, int64_t mtime_sec, char* block) {
  std::string_view prefix, rest;
  if (size > kMaxOctal11 || !SplitUstar(name, &prefix, &rest)) return false;
  PutUstarBlock(block, rest, prefix, size, static_cast<int64_t>(ClampMtime(mtime_sec)), '0');
  return true;
}

std::string EncodeTarHeader(std::string_view name, uint64_t size, int64_t mtime_sec) {
  uint64_t mtime = ClampMtime(mtime_sec);
  std::string_view prefix, rest;
  bool name_fits = SplitUstar(name, &prefix, &rest);
  bool size_fits = size <= kMaxOctal11;
  if (name_fits && size_fits) return UstarBlock(rest, prefix, size, static_cast<int64_t>(mtime), '0');

  std::string records;
  if (!name_fits) records += PaxRecord("path", name);
  if (!size_fits) records += PaxRecord("size", std::to_string(size));
  std::string_view base = name.substr(name.rfind('/') == std::string_view::npos ? 0 : name.rfind('/') + 1);
  std::string pax_name = "PaxHeaders.0/" + std::string(base.substr(0, kNameLen - 13));
  std::string out = UstarBlock(pax_name, {}, records.size(), static_cast<int64_t>(mtime), 'x');
  out += records;
  out.append(TarPadding(records.size()), '\0');
  // The USTAR header keeps what fits; readers take the PAX values.
  std::string_view short_name = name_fits ? rest : name.substr(0, kNameLen);
  out += UstarBlock(short_name, name_fits ? prefix : std::string_view{}, size_fits ? size : 0,
                    static_cast<int64_t>(mtime), '0');
  return out;
}

}  // namespace ais
