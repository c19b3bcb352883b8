#include "download/egress_guard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

namespace ais {
namespace {

std::string Check(const char* ip, EgressPolicy p = {}) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (std::strchr(ip, ':') != nullptr) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    EXPECT_EQ(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1) << ip;
    len = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    EXPECT_EQ(inet_pton(AF_INET, ip, &in->sin_addr), 1) << ip;
    len = sizeof(sockaddr_in);
  }
  return EgressRefusal(reinterpret_cast<sockaddr*>(&ss), len, p);
}

TEST(EgressGuardTest, PublicAddressesPass) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "2606:4700::1111",
                         "::ffff:8.8.8.8", "64:ff9b::808:808"}) {
    EXPECT_EQ(Check(ip), "") << ip;
  }
}

TEST(EgressGuardTest, AlwaysRefused) {
  const EgressPolicy all{.allow_private = true, .allow_loopback = true};
  EXPECT_EQ(Check("169.254.169.254", all), "link-local");  // cloud metadata
  EXPECT_EQ(Check("fe80::1", all), "link-local");
  EXPECT_EQ(Check("224.0.0.1", all), "multicast");
  EXPECT_EQ(Check("ff02::1", all), "multicast");
  EXPECT_EQ(Check("100.64.0.1", all), "CGNAT");
  EXPECT_EQ(Check("100.127.255.255", all), "CGNAT");
  EXPECT_EQ(Check("0.0.0.0", all), "unspecified");
  EXPECT_EQ(Check("::", all), "unspecified");
  EXPECT_EQ(Check("2002:7f00:1::", all), "6to4");
  EXPECT_EQ(Check("2001:0:4136:e378::1", all), "Teredo");
  EXPECT_EQ(Check("64:ff9b:1::1", all), "NAT64");
  EXPECT_EQ(Check("::ffff:169.254.169.254", all), "link-local");  // mapped: checked as IPv4
  EXPECT_EQ(Check("64:ff9b::a9fe:a9fe", all), "link-local");      // NAT64: the IPv4 it carries
}

TEST(EgressGuardTest, LoopbackOnlyWithItsSwitch) {
  EXPECT_EQ(Check("127.0.0.1"), "loopback");
  EXPECT_EQ(Check("127.255.0.9"), "loopback");
  EXPECT_EQ(Check("::1"), "loopback");
  EXPECT_EQ(Check("::ffff:127.0.0.1"), "loopback");
  EXPECT_EQ(Check("127.0.0.1", {.allow_private = true}), "loopback");  // private egress is not loopback
  const EgressPolicy lo{.allow_loopback = true};
  EXPECT_EQ(Check("127.0.0.1", lo), "");
  EXPECT_EQ(Check("::1", lo), "");
  EXPECT_EQ(Check("10.0.0.1", lo), "private");  // the switch lets in loopback only
}

TEST(EgressGuardTest, PrivateOnlyWithTheFeature) {
  for (const char* ip : {"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fd00::1", "fc00::1"}) {
    EXPECT_EQ(Check(ip), "private") << ip;
    EXPECT_EQ(Check(ip, {.allow_private = true}), "") << ip;
  }
}

TEST(EgressGuardTest, OtherFamiliesAndText) {
  sockaddr sa{};
  sa.sa_family = AF_UNIX;
  EXPECT_EQ(EgressRefusal(&sa, sizeof(sa), {.allow_private = true, .allow_loopback = true}), "not an IP address");
  EXPECT_EQ(EgressRefusal(nullptr, 0, {}), "no address");
  sockaddr_in in{};
  in.sin_family = AF_INET;
  inet_pton(AF_INET, "10.0.0.7", &in.sin_addr);
  EXPECT_EQ(AddressText(reinterpret_cast<sockaddr*>(&in), sizeof(in)), "10.0.0.7");
}

}  // namespace
}  // namespace ais
