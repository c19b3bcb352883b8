#include "archive/tar_scanner.h"

#include <cstring>
#include <optional>
#include <string_view>

#include "archive/tar_header.h"

namespace ais {
namespace {

constexpr uint64_t kMaxMetaEntry = 1 << 20;  // PAX/GNU long-name data larger than this is damage

std::string_view CString(const char* p, size_t max) {
  size_t n = 0;
  while (n < max && p[n] != '\0') ++n;
  return {p, n};
}

std::optional<uint64_t> ParseNumeric(const char* p, size_t width) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if (u[0] & 0x80) {  // base-256 (GNU): big-endian, first byte's top bit is the marker
    if (u[0] & 0x40) return std::nullopt;  // negative
    uint64_t v = u[0] & 0x3f;
    for (size_t i = 1; i < width; ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | u[i];
    }
    return v;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < width && (p[i] == ' ' || p[i] == '\0')) ++i;
  bool any = false;
  for (; i < width && p[i] >= '0' && p[i] <= '7'; ++i) {
    v = (v << 3) | static_cast<uint64_t>(p[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (p[i] != ' ' && p[i] != '\0') return std::nullopt;
  }
  return any ? std::optional<uint64_t>(v) : std::optional<uint64_t>(0);
}

bool ChecksumOk(const char* h) {
  auto want = ParseNumeric(h + 148, 8);
  if (!want) return false;
  uint64_t sum = 0;
  int64_t ssum = 0;  // some old writers summed signed chars
  for (size_t i = 0; i < kTarBlock; ++i) {
    unsigned char c = (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
    sum += c;
    ssum += (i >= 148 && i < 156) ? ' ' : static_cast<signed char>(h[i]);
  }
  return *want == sum || static_cast<int64_t>(*want) == ssum;
}

bool AllZero(const char* h) {
  for (size_t i = 0; i < kTarBlock; ++i) {
    if (h[i] != '\0') return false;
  }
  return true;
}

// PAX records "<len> <key>=<value>\n": the two we use.
void ParsePax(std::string_view data, std::optional<std::string>* path, std::optional<uint64_t>* size) {
  while (!data.empty()) {
    size_t sp = data.find(' ');
    if (sp == std::string_view::npos) return;
    uint64_t len = 0;
    for (size_t i = 0; i < sp; ++i) {
      if (data[i] < '0' || data[i] > '9') return;
      len = len * 10 + static_cast<uint64_t>(data[i] - '0');
    }
    if (len <= sp + 1 || len > data.size()) return;
    std::string_view rec = data.substr(sp + 1, len - sp - 1);
    if (rec.ends_with('\n')) rec.remove_suffix(1);
    size_t eq = rec.find('=');
    if (eq != std::string_view::npos) {
      std::string_view key = rec.substr(0, eq), val = rec.substr(eq + 1);
      if (key == "path") *path = std::string(val);
      if (key == "size") {
        uint64_t v = 0;
        bool ok = !val.empty();
        for (char c : val) {
          if (c < '0' || c > '9') ok = false;
          else v = v * 10 + static_cast<uint64_t>(c - '0');
        }
        if (ok) *size = v;
      }
    }
    data.remove_prefix(len);
  }
}

}  // namespace

Result<std::string> TarScanner::ReadData(uint64_t off, uint64_t len) {
  if (len > kMaxMetaEntry || off + len > total_) return Status::Corruption("tar: oversized or truncated metadata entry");
  std::string out(len, '\0');
  AIS_RETURN_IF_ERROR(read_(off, out.data(), len));
  return out;
}

Result<bool> TarScanner::Next(TarEntry* e) {
  std::optional<std::string> long_name;
  std::optional<uint64_t> pax_size;
  char h[kTarBlock];
  for (;;) {
    if (pos_ + kTarBlock > total_) {
      if (long_name || pax_size) return Status::Corruption("tar: archive ends inside an entry's headers");
      return false;
    }
    AIS_RETURN_IF_ERROR(read_(pos_, h, kTarBlock));
    if (AllZero(h)) return false;
    if (!ChecksumOk(h)) return Status::Corruption("tar: bad header checksum at offset " + std::to_string(pos_));
    auto hsize = ParseNumeric(h + 124, 12);
    if (!hsize) return Status::Corruption("tar: bad size field at offset " + std::to_string(pos_));
    char type = h[156];
    uint64_t data_off = pos_ + kTarBlock;
    uint64_t size = *hsize;
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (type == 'x' || type == 'L') {
        auto data = ReadData(data_off, size);
        if (!data.ok()) return data.status();
        if (type == 'L') {
          long_name = std::string(CString(data->data(), data->size()));
        } else {
          std::optional<std::string> path;
          ParsePax(*data, &path, &pax_size);
          if (path) long_name = std::move(path);
        }
      }
      pos_ = data_off + size + TarPadding(size);
      continue;
    }
    if (pax_size) size = *pax_size;
    if (long_name) {
      e->name = std::move(*long_name);
    } else {
      std::string_view name = CString(h, 100);
      std::string_view magic(h + 257, 6);
      std::string_view prefix = magic == std::string_view("ustar\0", 6) ? CString(h + 345, 155) : std::string_view{};
      e->name = prefix.empty() ? std::string(name) : std::string(prefix) + "/" + std::string(name);
    }
    e->size = size;
    e->offset = data_off;
    e->regular = (type == '0' || type == '\0' || type == '7') && !e->name.ends_with('/');
    // Directories, links and devices carry no data we would serve (hard links: size 0).
    uint64_t skip = e->regular ? size : (type == '5' || type == '1' || type == '2' ? 0 : size);
    if (e->regular && data_off + size > total_) return Status::Corruption("tar: truncated entry \"" + e->name + "\"");
    pos_ = data_off + skip + TarPadding(skip);
    return true;
  }
}

}  // namespace ais
