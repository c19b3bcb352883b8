#include "util/strings.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <random>

namespace ais {

std::optional<uint64_t> ParseUint(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseIecSize(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  auto num = ParseUint(s.substr(0, i));
  if (!num) return std::nullopt;
  std::string unit;
  for (char c : s.substr(i)) unit.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  uint64_t mult = 1;
  if (unit.empty() || unit == "B") {
    mult = 1;
  } else if (unit == "KIB" || unit == "KB" || unit == "K") {
    mult = 1ULL << 10;
  } else if (unit == "MIB" || unit == "MB" || unit == "M") {
    mult = 1ULL << 20;
  } else if (unit == "GIB" || unit == "GB" || unit == "G") {
    mult = 1ULL << 30;
  } else if (unit == "TIB" || unit == "TB" || unit == "T") {
    mult = 1ULL << 40;
  } else {
    return std::nullopt;
  }
  if (*num > UINT64_MAX / mult) return std::nullopt;
  return *num * mult;
}

std::string FormatIecSize(uint64_t n) {
  static constexpr const char* kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  static constexpr int kShifts[] = {40, 30, 20, 10};
  for (int i = 0; i < 4; ++i) {
    uint64_t unit = 1ULL << kShifts[i];
    if (n >= unit && n % unit == 0) return std::to_string(n / unit) + kUnits[i];
  }
  return std::to_string(n) + "B";
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

Result<std::string> RandomSecret(size_t len) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out;
  out.reserve(len);
  unsigned char buf[64];
  while (out.size() < len) {
    if (RAND_bytes(buf, sizeof(buf)) != 1) return Status::IOError("no random bytes for a secret (RAND_bytes)");
    for (unsigned char b : buf) {
      if (b < 248 && out.size() < len) out.push_back(kAlphabet[b % 62]);  // 248 = 4 * 62: no bias
    }
  }
  return out;
}

std::string RandomId(size_t len) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> dist(0, sizeof(kAlphabet) - 2);
  std::string out(len, 'x');
  for (auto& c : out) c = kAlphabet[dist(rng)];
  return out;
}

}  // namespace ais

namespace ais {

std::string PercentEncode(std::string_view s, std::string_view keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
        keep.find(ch) != std::string_view::npos) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view s, bool plus_as_space) {
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  const std::string_view special = plus_as_space ? "%+" : "%";
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find_first_of(special, i);
    out.append(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));  // a plain run at once
    if (j == std::string_view::npos) break;
    if (s[j] == '+') {
      out.push_back(' ');
      i = j + 1;
      continue;
    }
    if (j + 2 >= s.size()) return std::nullopt;
    int hi = hexval(s[j + 1]), lo = hexval(s[j + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i = j + 3;
  }
  return out;
}

std::string Base36(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  do {
    out.push_back(kDigits[v % 36]);
    v /= 36;
  } while (v);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace ais
