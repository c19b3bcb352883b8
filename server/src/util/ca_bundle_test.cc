#include "util/ca_bundle.h"

#include <gtest/gtest.h>

#include <set>

namespace ais {
namespace {

TEST(CaBundleTest, EnvironmentFirstThenLibcurlsOwnThenOtherDistributions) {
  std::set<std::string> files;
  auto exists = [&files](const std::string& p) { return files.count(p) > 0; };
  const std::string debian = "/etc/ssl/certs/ca-certificates.crt";
  const std::string rhel = "/etc/pki/tls/certs/ca-bundle.crt";
  EXPECT_EQ(ChooseCaBundle("/my.pem", "/other.pem", debian, exists), "/my.pem");
  EXPECT_EQ(ChooseCaBundle("", "/other.pem", debian, exists), "/other.pem");
  files = {debian};
  EXPECT_EQ(ChooseCaBundle("", "", debian, exists), "");  // libcurl's default is there: kept
  files = {rhel};  // a Debian-built libcurl on RHEL
  EXPECT_EQ(ChooseCaBundle("", "", debian, exists), rhel);
  files = {"/etc/ssl/ca-bundle.pem"};
  EXPECT_EQ(ChooseCaBundle("", "", "", exists), "/etc/ssl/ca-bundle.pem");
  files = {};
  EXPECT_EQ(ChooseCaBundle("", "", debian, exists), "");
}

}  // namespace
}  // namespace ais
