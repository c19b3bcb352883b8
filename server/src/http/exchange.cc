#include "http/exchange.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/headers.h"
#include "http/tls.h"
#include "util/file.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr size_t kBodyChunk = 1 << 20;             // streaming buffer for request bodies

// The streaming buffer for `left` more body bytes: a power of two from 4 KiB to kBodyChunk, so
// buffers freed by one request fit the next one's (bodies of every size would fragment the heap).
size_t BodyBufferSize(uint64_t left) {
  return std::bit_ceil(std::clamp<uint64_t>(left, 4096, kBodyChunk));
}
constexpr uint64_t kInlineReplyMax = 64 << 10;     // below this a copy beats a second syscall
constexpr auto kIoTimeout = std::chrono::seconds(120);

}  // namespace

Exchange::Exchange(Stream& stream, beast::flat_buffer& buffer, RequestParser& parser,
                   const NodeInfo& node, std::string remote_addr)
    : stream_(stream), buffer_(buffer), parser_(parser), node_(node), remote_addr_(std::move(remote_addr)) {
  std::string_view target = req().target();
  auto q = target.find('?');
  raw_path_ = target.substr(0, q);
  raw_query_ = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

std::optional<std::string> Exchange::query(std::string_view key) const {
  for (auto kv : Split(raw_query_, '&')) {
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    std::string_view k = kv.substr(0, eq);
    if (k.find_first_of("%+") == std::string_view::npos) {
      if (k != key) continue;  // the common case: a plain key, compared without decoding
    } else if (auto dk = PercentDecode(k, true); !dk || *dk != key) {
      continue;
    }
    if (eq == std::string_view::npos) return std::string();
    auto v = PercentDecode(kv.substr(eq + 1), true);
    return v ? *v : std::string(kv.substr(eq + 1));
  }
  return std::nullopt;
}

std::string_view Exchange::header(std::string_view name) const {
  auto it = req().find(name);
  return it == req().end() ? std::string_view{} : it->value();
}

std::vector<std::string_view> Exchange::header_all(std::string_view name) const {
  std::vector<std::string_view> out;
  auto range = req().equal_range(name);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->value());
  return out;
}

std::vector<std::pair<std::string_view, std::string_view>> Exchange::headers_with_prefix(
    std::string_view prefix) const {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const auto& f : req()) {
    std::string_view name = f.name_string();
    if (name.size() >= prefix.size() && IEquals(name.substr(0, prefix.size()), prefix)) out.emplace_back(name, f.value());
  }
  return out;
}

std::optional<uint64_t> Exchange::content_length() const {
  auto len = parser_.content_length();
  return len ? std::optional<uint64_t>(*len) : std::nullopt;
}

Task<void> Exchange::SendContinueIfExpected() {
  if (continue_sent_ || !IEquals(header("Expect"), "100-continue")) co_return;
  continue_sent_ = true;
  http::response<http::empty_body> res{http::status::continue_, req().version()};
  stream_.expires_after(kIoTimeout);
  beast::error_code ec;
  co_await http::async_write(stream_, res, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) reusable_ = false;
}

Task<Status> Exchange::StreamBody(const std::function<Status(const char*, size_t)>& sink) {
  co_await SendContinueIfExpected();
  std::vector<char> buf;  // sized when needed: a small body is often in buffer_ already
  if (auto len = content_length(); len && !parser_.chunked() && !parser_.is_done() && !body_taken_) {
    // A sized body bypasses the parser: large reads straight into our buffer, one syscall per MiB
    // instead of Beast's 64 KiB, and no copy through the parser's buffer.
    body_taken_ = true;
    uint64_t left = *len;
    if (size_t have = std::min<uint64_t>(buffer_.size(), left); have > 0) {
      auto data = buffer_.data();
      Status st = sink(static_cast<const char*>(data.data()), have);
      buffer_.consume(have);
      left -= have;
      if (!st.ok()) {
        buf.resize(BodyBufferSize(left));
        co_await Discard(left, buf);
        co_return st;
      }
    }
    buf.resize(BodyBufferSize(left));
    while (left > 0) {
      beast::error_code ec;
      stream_.expires_after(kIoTimeout);
      size_t n = co_await stream_.async_read_some(asio::buffer(buf.data(), std::min<uint64_t>(buf.size(), left)),
                                                  asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        reusable_ = false;
        co_return Status::InvalidArgument("failed to read request body: " + ec.message());
      }
      left -= n;
      if (Status st = sink(buf.data(), n); !st.ok()) {
        // Read and drop the rest, so the client (still sending) gets to read our error reply.
        co_await Discard(left, buf);
        co_return st;
      }
    }
    co_return Status::OK();
  }
  buf.resize(kBodyChunk);
  while (!parser_.is_done()) {
    auto& body = parser_.get().body();
    body.data = buf.data();
    body.size = buf.size();
    beast::error_code ec;
    stream_.expires_after(kIoTimeout);
    co_await http::async_read_some(stream_, buffer_, parser_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      reusable_ = false;
      co_return Status::InvalidArgument("failed to read request body: " + ec.message());
    }
    size_t got = buf.size() - body.size;
    if (got > 0) {
      Status st = sink(buf.data(), got);
      if (!st.ok()) co_return st;
    }
  }
  co_return Status::OK();
}

Task<void> Exchange::Discard(uint64_t left, std::vector<char>& buf) {
  if (left > kDrainLimit) {
    reusable_ = false;  // not worth reading: close after the reply
    co_return;
  }
  while (left > 0) {
    beast::error_code ec;
    stream_.expires_after(kIoTimeout);
    size_t n = co_await stream_.async_read_some(asio::buffer(buf.data(), std::min<uint64_t>(buf.size(), left)),
                                                asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      reusable_ = false;
      co_return;
    }
    left -= n;
  }
}

Task<Result<std::string>> Exchange::ReadBody(size_t limit) {
  if (auto len = content_length(); len && *len > limit) {
    co_return Status::InvalidArgument("request body too large (" + std::to_string(*len) + " bytes, limit " +
                                      std::to_string(limit) + ")");
  }
  std::string out;
  Status st = co_await StreamBody([&](const char* p, size_t n) {
    if (out.size() + n > limit) return Status::InvalidArgument("request body too large");
    out.append(p, n);
    return Status::OK();
  });
  if (!st.ok()) co_return st;
  co_return out;
}

http::status Exchange::HttpStatusFor(const Status& st) {
  using C = Status::Code;
  switch (st.code()) {
    case C::kOk: return http::status::ok;
    case C::kInvalidArgument: return http::status::bad_request;
    case C::kUnauthorized: return http::status::unauthorized;
    case C::kForbidden: return http::status::forbidden;
    case C::kNotFound:
    case C::kBucketNotFound: return http::status::not_found;
    case C::kMethodNotAllowed: return http::status::method_not_allowed;
    case C::kAlreadyExists:
    case C::kConflict: return http::status::conflict;
    case C::kGone: return http::status::gone;
    case C::kPreconditionFailed: return http::status::precondition_failed;
    case C::kRangeNotSatisfiable: return http::status::range_not_satisfiable;
    case C::kTooManyRequests: return http::status::too_many_requests;
    case C::kNotSupported: return http::status::not_implemented;
    case C::kUnavailable: return http::status::service_unavailable;
    case C::kNoSpace: return http::status::insufficient_storage;
    case C::kIOError:
    case C::kCorruption: return http::status::internal_server_error;
  }
  return http::status::internal_server_error;
}

void Exchange::FillHeaders(http::fields& f, const HeaderList& headers) const {
  for (auto& [k, v] : headers) f.insert(k, v);
}

void Exchange::BeginReply(http::status status, uint64_t body_bytes, bool unsized) {
  replied_ = true;
  reply_status_ = static_cast<unsigned>(status);
  reply_bytes_ = is_head() ? 0 : body_bytes;
  unsized_stream_ = unsized;
  if (observer_) observer_->OnReplyBegin(reply_status_, reply_bytes_);
}

Task<Replied> Exchange::Reply(http::status status, const HeaderList& headers, std::string body,
                              std::string_view content_type) {
  BeginReply(status, body.size(), false);
  http::response<http::string_body> res{status, req().version()};
  FillHeaders(res.base(), headers);
  if (!content_type.empty()) res.set(http::field::content_type, content_type);
  res.keep_alive(req().keep_alive() && reusable_);
  if (is_head()) {
    res.content_length(body.size());
  } else {
    res.body() = std::move(body);
    res.prepare_payload();
  }
  stream_.expires_after(kIoTimeout);
  beast::error_code ec;
  if (is_head()) {
    http::response<http::empty_body> head{std::move(res.base())};
    co_await http::async_write(stream_, head, asio::redirect_error(asio::use_awaitable, ec));
  } else {
    co_await http::async_write(stream_, res, asio::redirect_error(asio::use_awaitable, ec));
  }
  if (ec || !res.keep_alive()) reusable_ = false;
  co_return Replied();
}

Task<Replied> Exchange::ReplyHeaders(http::status status, const HeaderList& headers,
                                     std::optional<uint64_t> content_length) {
  co_await WriteReplyHeaders(status, headers, content_length);
  co_return Replied();
}

Task<bool> Exchange::WriteReplyHeaders(http::status status, const HeaderList& headers,
                                       std::optional<uint64_t> content_length) {
  BeginReply(status, content_length.value_or(0), false);
  http::response<http::empty_body> res{status, req().version()};
  FillHeaders(res.base(), headers);
  if (content_length) res.content_length(*content_length);
  res.keep_alive(req().keep_alive() && reusable_);
  stream_.expires_after(kIoTimeout);
  beast::error_code ec;
  http::response_serializer<http::empty_body> sr{res};
  co_await http::async_write_header(stream_, sr, asio::redirect_error(asio::use_awaitable, ec));
  if (ec || !res.keep_alive()) reusable_ = false;
  co_return !ec;
}

Task<Replied> Exchange::ReplyPieces(http::status status, const HeaderList& headers, std::string_view content_type,
                                     const std::vector<BodyPiece>& pieces) {
  uint64_t total = 0;
  for (const auto& p : pieces) total += p.data ? p.len : p.file.len;
  HeaderList all = headers;
  if (!content_type.empty()) all.emplace_back("Content-Type", std::string(content_type));
  if (!co_await WriteReplyHeaders(status, all, total) || is_head()) co_return Replied();
  if (!co_await WritePieces({}, pieces, {})) reusable_ = false;
  co_return Replied();
}

Task<StreamReply> Exchange::BeginStream(http::status status, const HeaderList& headers,
                                        std::string_view content_type, std::optional<uint64_t> content_length) {
  BeginReply(status, content_length.value_or(0), !content_length);
  http::response<http::empty_body> res{status, req().version()};
  FillHeaders(res.base(), headers);
  if (!content_type.empty()) res.set(http::field::content_type, content_type);
  chunked_ = !content_length && req().version() >= 11;
  if (content_length) {
    res.content_length(*content_length);
    res.keep_alive(req().keep_alive() && reusable_);
  } else if (chunked_) {
    res.chunked(true);
    res.keep_alive(req().keep_alive() && reusable_);
  } else {
    res.keep_alive(false);  // the body ends when the connection does
  }
  if (!res.keep_alive()) reusable_ = false;
  stream_.expires_after(kIoTimeout);
  beast::error_code ec;
  http::response_serializer<http::empty_body> sr{res};
  co_await http::async_write_header(stream_, sr, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) reusable_ = false;
  co_return StreamReply(*this, !ec);
}

Task<bool> StreamReply::Write(const std::vector<BodyPiece>& pieces) {
  if (alive_) alive_ = co_await ex_->WriteStream(pieces);
  co_return alive_;
}

Task<Replied> StreamReply::End(bool complete) {
  if (alive_) alive_ = co_await ex_->EndStream(complete);
  if (!alive_) ex_->reusable_ = false;
  co_return Replied();
}

Task<bool> Exchange::WriteStream(const std::vector<BodyPiece>& pieces) {
  uint64_t total = 0;
  for (const auto& p : pieces) total += p.data ? p.len : p.file.len;
  if (total == 0) co_return true;
  if (unsized_stream_) {
    reply_bytes_ += total;
    if (observer_) observer_->OnStreamBytes(total);
  }
  if (!chunked_) co_return co_await WritePieces({}, pieces, {});
  char head[24];
  int n = std::snprintf(head, sizeof(head), "%llx\r\n", static_cast<unsigned long long>(total));
  co_return co_await WritePieces(std::string_view(head, static_cast<size_t>(n)), pieces, "\r\n");
}

Task<bool> Exchange::EndStream(bool complete) {
  if (!chunked_) {
    if (!complete) reusable_ = false;
    co_return true;
  }
  co_return co_await WritePieces("0\r\n\r\n", {}, {});
}

Task<bool> Exchange::WritePieces(std::string_view head, const std::vector<BodyPiece>& pieces, std::string_view tail) {
  // Written straight to the non-blocking socket: a run of memory pieces is one sendmsg however
  // long it is (asio's async_write splits at 64 KiB, and each of its steps re-arms the stream's
  // timer and polls the reactor: three syscalls per 64 KiB), and the coroutine waits only when
  // the socket is full.
  std::vector<iovec> iov;
  iov.reserve(pieces.size() + 2);
  auto add = [&iov](const char* p, size_t n) {
    if (n > 0) iov.push_back(iovec{const_cast<char*>(p), n});
  };
  bool ok = true;
  add(head.data(), head.size());
  for (size_t i = 0; ok && i < pieces.size(); ++i) {
    const BodyPiece& p = pieces[i];
    if (p.data) {
      add(p.data, p.len);
      continue;
    }
    if (p.file.len == 0) continue;
    // The memory run goes out before the file's bytes, not held back (MSG_MORE) to share their
    // packets: holding back costs more server CPU than the extra packets.
    ok = co_await SendIov(iov);
    iov.clear();
    if (ok) ok = co_await SendFile(p.file);
  }
  if (ok) {
    add(tail.data(), tail.size());
    ok = co_await SendIov(iov);
  }
  if (!ok) reusable_ = false;
  co_return ok;
}

Task<bool> Exchange::WaitWritable() {
  auto& sock = stream_.socket();
  // The wait is not a Beast operation, so a watchdog enforces the deadline.
  asio::steady_timer watchdog(sock.get_executor());
  watchdog.expires_after(kIoTimeout);
  watchdog.async_wait([&sock](beast::error_code ec) {
    if (!ec) sock.cancel();
  });
  beast::error_code ec;
  co_await sock.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
  watchdog.cancel();
  co_return !ec;
}

tcp::socket& Exchange::NonBlockingSocket() {
  auto& sock = stream_.socket();
  if (!sock.native_non_blocking()) sock.native_non_blocking(true);  // the setter always costs an ioctl
  return sock;
}

Task<bool> Exchange::SendIov(std::vector<iovec>& iov) {
  if (stream_.tls()) co_return co_await SendIovTls(iov);
  co_return co_await SendRaw(iov);
}

Task<bool> Exchange::SendRaw(std::vector<iovec>& iov) {
  auto& sock = NonBlockingSocket();
  size_t first = 0;  // iov[first..] is still to be sent (iov[first] perhaps in part)
  while (first < iov.size()) {
    msghdr msg;
    std::memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
    const bool last_batch = first + msg.msg_iovlen == iov.size();
    ssize_t n = ::sendmsg(sock.native_handle(), &msg, MSG_NOSIGNAL | (last_batch ? 0 : MSG_MORE));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) co_return false;  // peer gone
      if (!co_await WaitWritable()) co_return false;
      continue;
    }
    auto left = static_cast<size_t>(n);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  co_return true;
}

Task<bool> Exchange::SendFile(const FileSegment& seg) {
  if (stream_.tls()) co_return co_await SendFileTls(seg);
  auto& sock = NonBlockingSocket();
  auto off = static_cast<off_t>(seg.offset);
  uint64_t left = seg.len;
  while (left > 0) {
    ssize_t n = ::sendfile(sock.native_handle(), seg.fd, &off, std::min<uint64_t>(left, 1ULL << 30));
    if (n > 0) {
      left -= static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) co_return false;  // file shorter than its metadata says
    if (errno == EINTR) continue;
    if (errno != EAGAIN) co_return false;  // peer gone
    if (!co_await WaitWritable()) co_return false;
  }
  co_return true;
}

Task<bool> Exchange::SendSealed(TlsRecordSealer& sealer) {
  std::string_view records = sealer.records();
  std::vector<iovec> iov{{const_cast<char*>(records.data()), records.size()}};
  bool ok = co_await SendRaw(iov);
  sealer.Clear();
  co_return ok;
}

Task<bool> Exchange::SendIovTls(const std::vector<iovec>& iov) {
  TlsRecordSealer sealer(stream_.tls()->native_handle());
  for (const auto& v : iov) {
    std::string_view run(static_cast<const char*>(v.iov_base), v.iov_len);
    while (!run.empty()) {  // at most a chunk's records buffered at a time
      std::string_view part = run.substr(0, kTlsFileChunk - std::min(kTlsFileChunk, sealer.records().size()));
      if (!sealer.Seal(part)) co_return false;
      run.remove_prefix(part.size());
      if (sealer.records().size() >= kTlsFileChunk && !co_await SendSealed(sealer)) co_return false;
    }
  }
  co_return sealer.records().empty() || co_await SendSealed(sealer);
}

Task<bool> Exchange::SendFileTls(const FileSegment& seg) {
  // Two bounded buffers: a file segment of any size costs about 2 x kTlsFileChunk of memory.
  std::vector<char> buf(std::min<uint64_t>(seg.len, kTlsFileChunk));
  TlsRecordSealer sealer(stream_.tls()->native_handle());
  uint64_t off = seg.offset;
  uint64_t left = seg.len;
  while (left > 0) {
    size_t want = std::min<uint64_t>(left, buf.size());
    ssize_t n = ::pread(seg.fd, buf.data(), want, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) co_return false;  // unreadable, or shorter than its metadata says
    if (!sealer.Seal({buf.data(), static_cast<size_t>(n)})) co_return false;
    if (!co_await SendSealed(sealer)) co_return false;  // peer gone
    off += static_cast<uint64_t>(n);
    left -= static_cast<uint64_t>(n);
  }
  co_return true;
}

std::string AisErrorText(const Status& st, http::status code, std::string_view method, std::string_view url_path,
                         std::string_view remote_addr, const NodeInfo& node) {
  nlohmann::json j = {{"message", st.message()},
                      {"method", std::string(method)},
                      {"url_path", std::string(url_path)},
                      {"remote_addr", std::string(remote_addr)},
                      {"caller", ""},
                      {"node", node.node_id},
                      {"status", static_cast<int>(code)}};
  if (st.code() == Status::Code::kBucketNotFound) j["tcode"] = "ErrBckNotFound";
  return JsonText(j);
}

Task<Replied> Exchange::ReplyError(const Status& st) {
  auto code = HttpStatusFor(st);
  std::string text = AisErrorText(st, code, method_string(), raw_path_, remote_addr_, node_);
  HeaderList headers = error_headers_;
  headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (st.code() == Status::Code::kMethodNotAllowed) headers.emplace_back("Allow", "GET, HEAD, PUT, POST, DELETE, PATCH");
  if (is_head()) {
    headers.emplace_back(hdr::kHdrError, text);
    co_return co_await ReplyHeaders(code, headers, std::nullopt);
  }
  co_return co_await Reply(code, headers, std::move(text), "application/json");
}

Task<Handled> Exchange::ReplyFile(http::status status, const HeaderList& headers,
                                  const std::vector<FileSegment>& segments, uint64_t total) {
  if (is_head()) co_return co_await ReplyHeaders(status, headers, total);
  // The caller's Content-Type (the S3 front end keeps one per object), else octet-stream.
  bool typed = false;
  for (const auto& h : headers) typed = typed || IEquals(h.first, "Content-Type");
  if (total <= kInlineReplyMax) {
    std::string body(total, '\0');
    if (Status st = ReadSegments(segments, body.data()); !st.ok()) co_return st;
    co_return co_await Reply(status, headers, std::move(body), typed ? "" : "application/octet-stream");
  }
  HeaderList all = headers;
  if (!typed) all.emplace_back("Content-Type", "application/octet-stream");
  if (!co_await WriteReplyHeaders(status, all, total)) co_return Replied();
  if (!co_await SendSegments(segments)) reusable_ = false;  // a short body: the client must see EOF
  co_return Replied();
}

Task<bool> Exchange::SendSegments(const std::vector<FileSegment>& segments) {
  for (const auto& seg : segments) {
    if (!co_await SendFile(seg)) co_return false;
  }
  co_return true;
}

}  // namespace ais
