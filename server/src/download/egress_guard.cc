#include "download/egress_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace ais {
namespace {

std::string V4Refusal(uint32_t a, const EgressPolicy& policy) {  // host byte order
  auto in = [a](uint32_t net, int bits) { return bits == 0 || (a >> (32 - bits)) == (net >> (32 - bits)); };
  if (in(0x7F000000, 8)) return policy.allow_loopback ? "" : "loopback";
  if (in(0x00000000, 8)) return "unspecified";
  if (in(0xA9FE0000, 16)) return "link-local";
  if (in(0xE0000000, 4)) return "multicast";
  if (in(0x64400000, 10)) return "CGNAT";
  if (in(0xFFFFFFFF, 32)) return "broadcast";
  const bool priv = in(0x0A000000, 8) || in(0xAC100000, 12) || in(0xC0A80000, 16);
  if (priv && !policy.allow_private) return "private";
  return "";
}

uint32_t V4At(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

std::string V6Refusal(const uint8_t* b, const EgressPolicy& policy) {
  static constexpr std::array<uint8_t, 12> kMapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  static constexpr std::array<uint8_t, 12> kNat64 = {0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kMapped.data(), 12) == 0 || std::memcmp(b, kNat64.data(), 12) == 0) {
    return V4Refusal(V4At(b + 12), policy);
  }
  static constexpr std::array<uint8_t, 16> kZero{};
  if (std::memcmp(b, kZero.data(), 15) == 0) {
    if (b[15] == 1) return policy.allow_loopback ? "" : "loopback";
    if (b[15] == 0) return "unspecified";
  }
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return "link-local";
  if (b[0] == 0xFF) return "multicast";
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4] == 0x00 && b[5] == 0x01) return "NAT64";
  if (b[0] == 0x20 && b[1] == 0x02) return "6to4";
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) return "Teredo";
  if ((b[0] & 0xFE) == 0xFC && !policy.allow_private) return "private";
  return "";
}

}  // namespace

std::string EgressRefusal(const sockaddr* addr, socklen_t len, const EgressPolicy& policy) {
  if (addr == nullptr) return "no address";
  if (addr->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return V4Refusal(ntohl(in->sin_addr.s_addr), policy);
  }
  if (addr->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return V6Refusal(in6->sin6_addr.s6_addr, policy);
  }
  return "not an IP address";
}

std::string AddressText(const sockaddr* addr, socklen_t len) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr != nullptr && addr->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof(buf));
  } else if (addr != nullptr && addr->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof(buf));
  } else {
    return "?";
  }
  return buf;
}

}  // namespace ais
