#include "util/ca_bundle.h"

#include <sys/stat.h>

#include <cstdlib>

namespace ais {

std::string ChooseCaBundle(const std::string& ssl_cert_file, const std::string& curl_ca_bundle,
                           const std::string& curl_default, const std::function<bool(const std::string&)>& exists) {
  if (!ssl_cert_file.empty()) return ssl_cert_file;
  if (!curl_ca_bundle.empty()) return curl_ca_bundle;
  if (!curl_default.empty() && exists(curl_default)) return "";
  static const char* const kKnown[] = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Arch, Alpine
      "/etc/pki/tls/certs/ca-bundle.crt",                   // RHEL, Fedora, CentOS
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7+
      "/etc/ssl/ca-bundle.pem",                             // SUSE
      "/etc/ssl/cert.pem",                                  // Alpine, macOS-like layouts
  };
  for (const char* path : kKnown) {
    if (exists(path)) return path;
  }
  return "";
}

const std::string& CaBundle() {
  static const std::string chosen = [] {
    auto env = [](const char* name) {
      const char* v = std::getenv(name);
      return std::string(v ? v : "");
    };
    const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
    const std::string compiled = info && info->cainfo ? info->cainfo : "";
    return ChooseCaBundle(env("SSL_CERT_FILE"), env("CURL_CA_BUNDLE"), compiled, [](const std::string& p) {
      struct stat st;
      return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    });
  }();
  return chosen;
}

void UseCaBundle(CURL* c) {
  if (const std::string& path = CaBundle(); !path.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, path.c_str());
}

}  // namespace ais
