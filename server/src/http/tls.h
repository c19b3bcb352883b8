// TLS for the HTTP server: the options (files named as on the command line and in AIS's
// net.http config) and the OpenSSL server context built from them.
#pragma once

#include <openssl/types.h>

#include <memory>
#include <string>
#include <string_view>

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

// Over TLS, object bytes are read from their file, sealed into records and written this much at
// a time (two buffers per sending connection: memory stays bounded whatever the object size).
inline constexpr size_t kTlsFileChunk = 256 << 10;

// Encrypts reply bytes into TLS records in a buffer of its own, for the Exchange to write to the
// socket in one go. Asio's engine gives OpenSSL a 17 KiB BIO pair, so through it every 16 KiB
// record costs a socket write (and a timer rearm): most of the CPU of a large TLS read. While a
// sealer lives, the connection's write BIO is the sealer's; the destructor gives the engine its
// own back.
// REQUIRES: no engine operation in flight and its output all written (true between the
// Exchange's awaited writes); the handshake done.
class TlsRecordSealer {
 public:
  explicit TlsRecordSealer(SSL* ssl);
  ~TlsRecordSealer();
  TlsRecordSealer(const TlsRecordSealer&) = delete;
  TlsRecordSealer& operator=(const TlsRecordSealer&) = delete;

  // Appends the records carrying `data` to records(). False if OpenSSL refuses; the connection
  // is then unusable.
  bool Seal(std::string_view data);
  std::string_view records() const { return records_; }
  void Clear() { records_.clear(); }

 private:
  SSL* ssl_;
  BIO* engine_bio_;      // the engine's end, held here while the sink is in place
  bool installed_;       // false only if the sink could not be made (out of memory)
  std::string records_;  // the sink BIO appends here
};

// How object bytes leave over TLS, for the startup log: read from the file and encrypted in
// user space in bounded chunks (kTLS, which would let sendfile carry them, is not used: OpenSSL
// hands the keys to the kernel only when its BIO is the socket, and here it writes to memory).
// Says whether the kernel offers kTLS at all.
std::string TlsDataPathDescription();

}  // namespace ais
