// TLS for the HTTP server: the options (files named as on the command line and in AIS's
// net.http config) and the OpenSSL server context built from them.
#pragma once

#include <memory>
#include <string>

#include "http/stream.h"
#include "util/status.h"

namespace ais {

struct TlsOptions {
  std::string cert_file;       // PEM certificate chain, leaf first (AIS net.http.server_crt)
  std::string key_file;        // PEM private key of the leaf (AIS net.http.server_key)
  std::string client_ca_file;  // PEM CAs; set: every client must present a certificate they
                               // signed (mTLS; AIS net.http.client_ca_tls, client_auth_tls = 4)
  bool enabled() const { return !cert_file.empty(); }
  bool mutual() const { return !client_ca_file.empty(); }
};

// Go's tls.ClientAuthType, as AIS's net.http.client_auth_tls shows it: 0 no client
// certificate asked for, 4 one required and verified.
inline int ClientAuthTls(const TlsOptions& o) { return o.mutual() ? 4 : 0; }

// A server context for TLS 1.2 and 1.3 with the certificate and key (checked to match) and, for
// mTLS, the client CAs. Errors name the file that failed.
Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsOptions& opts);

// Over TLS, object bytes are read from their file and written through the TLS engine this much
// at a time (one buffer per sending connection: memory stays bounded whatever the object size).
inline constexpr size_t kTlsFileChunk = 256 << 10;

// How object bytes leave over TLS, for the startup log: read from the file and encrypted in
// user space in bounded chunks (kTLS, which would let sendfile carry them, is not used: the
// Asio TLS engine runs OpenSSL over memory BIOs, where OpenSSL cannot hand the keys to the
// kernel). Says whether the kernel offers kTLS at all.
std::string TlsDataPathDescription();

}  // namespace ais
