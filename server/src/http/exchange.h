// Exchange: one HTTP request and its reply, as handlers see it. It owns no socket; the Session
// lends it the stream, read buffer and parser for the duration of one request.
//
// Bodies are streamed (never buffered whole unless ReadBody is asked for a bounded JSON body);
// over plain TCP, object bytes leave through sendfile(2) straight from the object's file
// segments; over TLS, sealed into records in bounded chunks (kTlsFileChunk) and written the same
// way.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/asio.h"
#include "http/handled.h"
#include "http/stream.h"
#include "util/file_segment.h"
#include "util/status.h"

namespace ais {

class TlsRecordSealer;

using RequestParser = http::request_parser<http::buffer_body>;
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One run of reply bytes: `len` bytes at `data`, or (data == nullptr) the file segment `file`,
// which goes out by sendfile. The bytes must stay valid until the write returns.
struct BodyPiece {
  const char* data = nullptr;
  size_t len = 0;
  FileSegment file{-1, 0, 0};
};

// After an error reply sent before the request body was read through, the rest of the body is
// read and dropped, up to this much, so that the client (still sending) reads the reply instead
// of a reset connection. A longer body costs more to drain than a new connection: the connection
// is closed instead.
inline constexpr uint64_t kDrainLimit = 1ULL << 30;

struct NodeInfo {
  std::string node_id;  // e.g. "t[AbCdEf12]" in error messages
  std::string daemon_id;
};

// The AIS error JSON every error reply carries (the body, or HEAD's Hdr-Error): message, method,
// url_path, remote_addr, caller, node, status (`code`) and, from the Status's code alone, tcode.
// `method` and `url_path` are empty when the request's head could not be read.
std::string AisErrorText(const Status& st, http::status code, std::string_view method, std::string_view url_path,
                         std::string_view remote_addr, const NodeInfo& node);

// Told of a reply before any byte of it is written: its status and body length as it begins,
// and, for a stream of unknown length, each run of body bytes before the run is written. What an
// observer records is therefore in place before the client can hold the reply (the router
// counts requests here: "I have the reply" implies "it is counted").
class ReplyObserver {
 public:
  // `body_bytes`: the body's length (0 for HEAD, and for a stream of unknown length so far).
  virtual void OnReplyBegin(unsigned status, uint64_t body_bytes) = 0;
  virtual void OnStreamBytes(uint64_t n) = 0;

 protected:
  ~ReplyObserver() = default;
};

// A reply whose header is out (Exchange::BeginStream) and whose body follows. It can only write
// and end: once it exists, the reply has begun and no error reply is possible any more.
class StreamReply {
 public:
  // False once the peer is gone; further writes do nothing.
  bool alive() const { return alive_; }
  Task<bool> Write(const std::vector<BodyPiece>& pieces);
  // Ends the body; `complete` false: it was cut short (the client must be able to tell).
  Task<Replied> End(bool complete);

 private:
  friend class Exchange;
  StreamReply(Exchange& ex, bool alive) : ex_(&ex), alive_(alive) {}
  Exchange* ex_;
  bool alive_;
};

class Exchange {
 public:
  Exchange(Stream& stream, beast::flat_buffer& buffer, RequestParser& parser, const NodeInfo& node,
           std::string remote_addr);

  // --- request ---
  http::verb method() const { return req().method(); }
  bool is_head() const { return method() == http::verb::head; }
  std::string_view method_string() const { return req().method_string(); }
  // The path without the query, still percent-encoded.
  std::string_view raw_path() const { return raw_path_; }
  // The query as received (without '?'), still percent-encoded.
  std::string_view raw_query() const { return raw_query_; }
  // The client's address ("ip:port"), as the error JSON's remote_addr (and the access log) show it.
  std::string_view remote_addr() const { return remote_addr_; }
  // Decoded query value ('+' means space); nullopt if the key is absent.
  std::optional<std::string> query(std::string_view key) const;
  // Header value, or "" if absent. Case-insensitive.
  std::string_view header(std::string_view name) const;
  std::vector<std::string_view> header_all(std::string_view name) const;
  // Every header whose name starts with `prefix` (case-insensitive), as (name, value), in order.
  std::vector<std::pair<std::string_view, std::string_view>> headers_with_prefix(std::string_view prefix) const;
  std::optional<uint64_t> content_length() const;

  // --- request body ---
  // Reads the whole body if it is at most `limit` bytes, else kInvalidArgument.
  Task<Result<std::string>> ReadBody(size_t limit);
  // Streams the body to `sink` in pieces; stops at the first error `sink` returns.
  Task<Status> StreamBody(const std::function<Status(const char*, size_t)>& sink);
  bool body_done() const { return parser_.is_done() || body_taken_; }

  // --- reply (exactly one per exchange) ---
  // Each yields the Replied a handler returns. A handler that fails before replying returns the
  // Status instead, and the router replies with it (ReplyError).
  Task<Replied> Reply(http::status status, const HeaderList& headers = {}, std::string body = {},
                      std::string_view content_type = {});
  // The error reply: AIS error JSON (HEAD: in the Hdr-Error header, no body), with the headers
  // AddErrorHeader staged. Called by the router (and the server's last-resort guard), not by
  // handlers: they return the Status.
  Task<Replied> ReplyError(const Status& st);
  // A header the error reply will carry if this exchange ends in one (e.g. Content-Range of a 416).
  void AddErrorHeader(std::string name, std::string value) {
    error_headers_.emplace_back(std::move(name), std::move(value));
  }
  // Header, then the segments by sendfile (small replies go out in one write). Fails (with
  // nothing sent) only if a small reply cannot be read.
  Task<Handled> ReplyFile(http::status status, const HeaderList& headers, const std::vector<FileSegment>& segments,
                          uint64_t total);
  // A HEAD-style reply: headers and Content-Length, no body.
  Task<Replied> ReplyHeaders(http::status status, const HeaderList& headers, std::optional<uint64_t> content_length);
  // A reply of known length made of memory and file pieces.
  Task<Replied> ReplyPieces(http::status status, const HeaderList& headers, std::string_view content_type,
                            const std::vector<BodyPiece>& pieces);
  // A reply written progressively, through the StreamReply returned. Without a length it uses
  // HTTP/1.1 chunked transfer coding (to an HTTP/1.0 client: the body ends when the connection
  // closes); with one, exactly that many bytes must follow.
  Task<StreamReply> BeginStream(http::status status, const HeaderList& headers, std::string_view content_type,
                                std::optional<uint64_t> content_length);

  bool replied() const { return replied_; }
  // Null (the default) or an observer that outlives the reply (cleared by whoever set it).
  void set_reply_observer(ReplyObserver* o) { observer_ = o; }
  // The reply's status (0 before one) and its body's length (0 for HEAD), for the metrics.
  unsigned reply_status() const { return reply_status_; }
  uint64_t reply_bytes() const { return reply_bytes_; }
  // False once the connection can no longer carry another request.
  bool reusable() const { return reusable_; }
  static http::status HttpStatusFor(const Status& st);

 private:
  friend class StreamReply;
  const http::request<http::buffer_body>& req() const { return parser_.get(); }
  // StreamReply's: each returns false once the peer is gone. EndStream(false) ends a body cut
  // short: the connection is closed so the client sees it (chunked: the terminating chunk is
  // still sent, the payload format has to tell).
  Task<bool> WriteStream(const std::vector<BodyPiece>& pieces);
  Task<bool> EndStream(bool complete);
  Task<void> SendContinueIfExpected();
  // Reads and drops `left` body bytes (or gives up on the connection if that is too much).
  Task<void> Discard(uint64_t left, std::vector<char>& buf);
  Task<bool> SendSegments(const std::vector<FileSegment>& segments);
  // Writes the reply's status line and headers; false if the connection failed. A reply without
  // keep-alive (the client's "Connection: close") still gets its body: it ends the connection.
  Task<bool> WriteReplyHeaders(http::status status, const HeaderList& headers, std::optional<uint64_t> content_length);
  // Plain TCP: straight to the non-blocking socket, waiting only while it is full (up to the I/O
  // timeout). TLS: sealed into records (TlsRecordSealer), which go out the same way. False once
  // the peer is gone. SendIov consumes `iov`.
  Task<bool> SendIov(std::vector<iovec>& iov);
  Task<bool> SendFile(const FileSegment& seg);
  Task<bool> SendIovTls(const std::vector<iovec>& iov);
  Task<bool> SendFileTls(const FileSegment& seg);
  // Bytes as they are to the socket (under TLS: records already sealed); consumes `iov`.
  Task<bool> SendRaw(std::vector<iovec>& iov);
  // The sealer's records to the socket; clears them.
  Task<bool> SendSealed(TlsRecordSealer& sealer);
  Task<bool> WaitWritable();
  // The connection's socket, switched to non-blocking mode if it is not yet.
  tcp::socket& NonBlockingSocket();
  // head, the pieces, tail; consecutive memory runs go out in one gathered write.
  Task<bool> WritePieces(std::string_view head, const std::vector<BodyPiece>& pieces, std::string_view tail);
  void FillHeaders(http::fields& f, const HeaderList& headers) const;
  // Every reply starts here: records status and length and tells the observer.
  void BeginReply(http::status status, uint64_t body_bytes, bool unsized);

  Stream& stream_;
  beast::flat_buffer& buffer_;
  RequestParser& parser_;
  const NodeInfo& node_;
  std::string remote_addr_;
  ReplyObserver* observer_ = nullptr;
  HeaderList error_headers_;
  std::string_view raw_path_;
  std::string_view raw_query_;
  bool continue_sent_ = false;
  bool chunked_ = false;  // BeginStream chose HTTP/1.1 chunked coding
  bool body_taken_ = false;  // a sized body was read past the parser (StreamBody)
  bool replied_ = false;
  bool reusable_ = true;
  bool unsized_stream_ = false;  // BeginStream without a length: reply_bytes_ counts what is written
  unsigned reply_status_ = 0;
  uint64_t reply_bytes_ = 0;
};

}  // namespace ais
