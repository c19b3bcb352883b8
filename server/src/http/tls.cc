#include "http/tls.h"

#include <openssl/ssl.h>

#include <fstream>

namespace ais {
namespace {

std::string Why(const beast::error_code& ec) { return ec.message(); }

// A write-only BIO appending to the std::string in its data pointer: it never refuses, so
// SSL_write never waits on it.
int SinkWrite(BIO* bio, const char* data, int len) {
  static_cast<std::string*>(BIO_get_data(bio))->append(data, static_cast<size_t>(len));
  return len;
}

long SinkCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }  // NOLINT(runtime/int)

int SinkCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* SinkMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "aistore TLS record sink");
    BIO_meth_set_write(m, SinkWrite);
    BIO_meth_set_ctrl(m, SinkCtrl);
    BIO_meth_set_create(m, SinkCreate);
    return m;
  }();
  return method;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsOptions& opts) {
  if (opts.cert_file.empty() || opts.key_file.empty()) {
    return Status::InvalidArgument("TLS needs both a certificate and its key");
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  // TLS 1.2 and 1.3 only; no renegotiation (a client could make the server redo handshakes).
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  beast::error_code ec;
  ctx->use_certificate_chain_file(opts.cert_file, ec);
  if (ec) return Status::InvalidArgument("TLS certificate " + opts.cert_file + ": " + Why(ec));
  ctx->use_private_key_file(opts.key_file, ssl::context::pem, ec);
  if (ec) return Status::InvalidArgument("TLS key " + opts.key_file + ": " + Why(ec));
  if (SSL_CTX_check_private_key(native) != 1) {
    return Status::InvalidArgument("TLS key " + opts.key_file + " does not match certificate " + opts.cert_file);
  }
  if (opts.mutual()) {
    ctx->load_verify_file(opts.client_ca_file, ec);
    if (ec) return Status::InvalidArgument("TLS client CA " + opts.client_ca_file + ": " + Why(ec));
    // The CA names go in the CertificateRequest, so a client holding several certificates
    // picks one these CAs signed.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(opts.client_ca_file.c_str());
    if (names == nullptr) return Status::InvalidArgument("TLS client CA " + opts.client_ca_file + ": no certificates");
    SSL_CTX_set_client_CA_list(native, names);  // takes ownership
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  // Session resumption with client verification needs a context id (OpenSSL refuses to resume
  // a session otherwise); any constant unique to this server will do.
  static constexpr unsigned char kSessionContext[] = "aistore-server";
  SSL_CTX_set_session_id_context(native, kSessionContext, sizeof(kSessionContext) - 1);
  return ctx;
}

TlsRecordSealer::TlsRecordSealer(SSL* ssl) : ssl_(ssl), engine_bio_(SSL_get_wbio(ssl)), installed_(false) {
  records_.reserve(kTlsFileChunk + kTlsFileChunk / 64);  // room for a chunk's record overhead
  BIO* sink = BIO_new(SinkMethod());
  if (sink == nullptr) return;
  BIO_set_data(sink, &records_);
  BIO_up_ref(engine_bio_);    // SSL_set0_wbio drops the SSL's reference; ours keeps it alive
  SSL_set0_wbio(ssl_, sink);  // the SSL owns the sink from here
  installed_ = true;
}

TlsRecordSealer::~TlsRecordSealer() {
  if (installed_) SSL_set0_wbio(ssl_, engine_bio_);  // frees the sink
}

bool TlsRecordSealer::Seal(std::string_view data) {
  if (!installed_) return false;
  // The engine sets SSL_MODE_ENABLE_PARTIAL_WRITE: one call may take only one record's worth.
  while (!data.empty()) {
    size_t n = 0;
    if (SSL_write_ex(ssl_, data.data(), data.size(), &n) != 1) return false;
    data.remove_prefix(n);
  }
  return true;
}

std::string TlsDataPathDescription() {
  // A ULP is listed once its module is loaded (or built in); "tls" is kTLS.
  std::ifstream f("/proc/sys/net/ipv4/tcp_available_ulp");
  bool kernel_tls = false;
  for (std::string ulp; f >> ulp;) kernel_tls = kernel_tls || ulp == "tls";
  return "TLS: object bytes are read and encrypted in user space, " + std::to_string(kTlsFileChunk >> 10) +
         " KiB at a time, one socket write each (no sendfile; kTLS " +
         (kernel_tls ? "is offered by the kernel but not used by this build" : "is not offered by this kernel") + ")";
}

}  // namespace ais
