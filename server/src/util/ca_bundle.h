// The CA certificates libcurl checks servers against. A libcurl built on one distribution looks
// for that distribution's bundle (Debian: /etc/ssl/certs/ca-certificates.crt); the same library
// inside a binary wheel, on a RHEL or SUSE machine, would find none and refuse every https://
// server. So: $SSL_CERT_FILE or $CURL_CA_BUNDLE when set (as OpenSSL and the curl tool read
// them), else libcurl's own default when that file exists, else the first bundle other
// distributions keep.
#pragma once

#include <curl/curl.h>

#include <functional>
#include <string>

namespace ais {

// The choice above, given the environment's values ("" when unset), libcurl's compiled default
// ("" when none) and a test for a file's existence. "" when none exists: libcurl's default stays.
std::string ChooseCaBundle(const std::string& ssl_cert_file, const std::string& curl_ca_bundle,
                           const std::string& curl_default, const std::function<bool(const std::string&)>& exists);

// ChooseCaBundle for this process (decided once).
const std::string& CaBundle();

// Sets CURLOPT_CAINFO to CaBundle() when it names one. Call after every curl_easy_reset.
void UseCaBundle(CURL* c);

}  // namespace ais
