#include "http/tls.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "http/server.h"
#include "util/file.h"

namespace ais {
namespace {

struct TestCert {
  std::string cert_file;
  std::string key_file;
};

// A self-signed P-256 certificate for 127.0.0.1 and its key, as PEM files under `dir`.
TestCert MakeSelfSigned(const std::string& dir, const std::string& stem) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
  EXPECT_TRUE(key && x);
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  EXPECT_GT(X509_sign(x.get(), key.get(), EVP_sha256()), 0);
  TestCert out{dir + "/" + stem + ".crt", dir + "/" + stem + ".key"};
  FILE* f = std::fopen(out.cert_file.c_str(), "w");
  PEM_write_X509(f, x.get());
  std::fclose(f);
  f = std::fopen(out.key_file.c_str(), "w");
  PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  return out;
}

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ais-tls-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    cert_ = MakeSelfSigned(dir_, "server");
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(dir_);
  }
  void StartServer(RequestHandler handler) {
    auto ctx = MakeServerTlsContext({.cert_file = cert_.cert_file, .key_file = cert_.key_file, .client_ca_file = ""});
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    HttpServerOptions opts;
    opts.host = "127.0.0.1";
    opts.port = 0;
    opts.threads = 2;
    opts.header_timeout = std::chrono::seconds(2);
    opts.tls = *ctx;
    server_ = std::make_unique<HttpServer>(opts, NodeInfo{"t[test]", "test"}, std::move(handler));
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(false); });
  }

  // GETs `target` twice on one TLS connection (keep-alive); returns the second reply.
  http::response<http::string_body> TlsGetTwice(const std::string& target) {
    asio::io_context io;
    ssl::context ctx(ssl::context::tls_client);
    ctx.load_verify_file(cert_.cert_file);
    ctx.set_verify_mode(ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> s(io, ctx);
    beast::get_lowest_layer(s).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    s.handshake(ssl::stream_base::client);
    http::response<http::string_body> res;
    for (int i = 0; i < 2; ++i) {
      http::request<http::empty_body> req{http::verb::get, target, 11};
      req.set(http::field::host, "127.0.0.1");
      http::write(s, req);
      beast::flat_buffer buf;
      res = {};
      http::read(s, buf, res);
    }
    return res;
  }

  std::string dir_;
  TestCert cert_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

// Sends `raw` over plain TCP and reads until the server closes (5 s per read at most).
std::string PlainExchange(uint16_t port, const std::string& raw) {
  asio::io_context io;
  tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  timeval tv{5, 0};
  ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (!raw.empty()) asio::write(sock, asio::buffer(raw));
  ::shutdown(sock.native_handle(), SHUT_WR);
  std::string got;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(sock.native_handle(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

TEST(TlsContextTest, ErrorsNameTheFile) {
  auto missing = MakeServerTlsContext({.cert_file = "/nonexistent/s.crt", .key_file = "/nonexistent/s.key", .client_ca_file = ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/s.crt"), std::string::npos) << missing.status().message();

  char tmpl[] = "/tmp/ais-tls-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  TestCert a = MakeSelfSigned(tmpl, "a"), b = MakeSelfSigned(tmpl, "b");
  auto mismatch = MakeServerTlsContext({.cert_file = a.cert_file, .key_file = b.key_file, .client_ca_file = ""});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find(b.key_file), std::string::npos) << mismatch.status().message();
  auto bad_ca = MakeServerTlsContext({.cert_file = a.cert_file, .key_file = a.key_file, .client_ca_file = "/nonexistent/ca"});
  EXPECT_FALSE(bad_ca.ok());
  auto ok = MakeServerTlsContext({.cert_file = a.cert_file, .key_file = a.key_file, .client_ca_file = b.cert_file});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  std::filesystem::remove_all(tmpl);
}

// File replies (past the inline size: the chunked read + TLS write path, over several chunks
// and segments) and memory pieces arrive byte-exact, and the connection stays reusable.
TEST_F(TlsServerTest, FileAndPieceRepliesAreByteExact) {
  char path[] = "/tmp/ais-tls-file-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  UniqueFd file(fd);
  std::string data(3 * kTlsFileChunk + 12345, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 % 251);
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  StartServer([fd, &data](Exchange& ex) -> Task<void> {
    if (ex.raw_path() == "/pieces") {
      static const std::string a = "head-", b = "-tail";
      const std::vector<BodyPiece> pieces = {BodyPiece{a.data(), a.size()},
                                             BodyPiece{nullptr, 0, FileSegment{fd, 10, 100000}},
                                             BodyPiece{b.data(), b.size()}};
      co_await ex.ReplyPieces(http::status::ok, {}, "application/octet-stream", pieces);
      co_return;
    }
    // Two segments: the second half first.
    const uint64_t half = data.size() / 2;
    const std::vector<FileSegment> segments = {FileSegment{fd, half, data.size() - half}, FileSegment{fd, 0, half}};
    Handled h = co_await ex.ReplyFile(http::status::ok, {}, segments, data.size());
    if (!h.replied()) co_await ex.ReplyError(h.status());
  });
  auto res = TlsGetTwice("/file");
  EXPECT_EQ(res.result_int(), 200u);
  const uint64_t half = data.size() / 2;
  EXPECT_TRUE(res.body() == data.substr(half) + data.substr(0, half));
  res = TlsGetTwice("/pieces");
  EXPECT_EQ(res.body(), "head-" + data.substr(10, 100000) + "-tail");
}

// Plain HTTP on the TLS port gets a plain 400 that says why; bytes that are neither end in a
// close; the server goes on serving.
TEST_F(TlsServerTest, NonTlsClientsAreTurnedAway) {
  StartServer([](Exchange& ex) -> Task<void> { co_await ex.Reply(http::status::ok, {}, "fine", "text/plain"); });
  std::string got = PlainExchange(port_, "GET /v1/health HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 400") << got;
  EXPECT_NE(got.find("HTTP request to an HTTPS server"), std::string::npos) << got;
  // Not TLS, not HTTP: at most a TLS alert, then the close.
  EXPECT_EQ(PlainExchange(port_, std::string(3000, '\x16')).find("HTTP/"), std::string::npos);
  EXPECT_EQ(PlainExchange(port_, ""), "");
  EXPECT_EQ(TlsGetTwice("/").body(), "fine");
  // Every one of those connections ends (the last one's close may still be under way).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->open_connections(), 0u);
}

}  // namespace
}  // namespace ais
