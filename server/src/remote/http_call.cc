#include "remote/http_call.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "util/ca_bundle.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr int kMaxAttempts = 4;             // one try and three retries
constexpr long kConnectTimeoutMs = 10'000;
constexpr long kLowSpeedSecs = 30;          // a transfer slower than 1 B/s this long is cut
constexpr size_t kMaxErrorBody = 64 << 10;  // error documents are small; keep no more
constexpr size_t kMaxDocBody = 32 << 20;    // a listing page of 1000 keys of 1 KiB is ~1.5 MB
constexpr long kReceiveBuffer = 512 << 10;  // bytes handed to a GET's sink per call (curl's default: 16 KiB)

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

bool Retryable(long status) { return status == 429 || status == 500 || status == 502 || status == 503 || status == 504; }
bool Ok(long status) { return status >= 200 && status < 300; }

size_t OnHeader(char* p, size_t size, size_t n, void* self) {
  auto* c = static_cast<HttpCall*>(self);
  std::string_view line(p, size * n);
  if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue, a redirect): start over
    c->resp_headers.clear();
    // OnWrite tells data from an error document by the status.
    auto sp = line.find(' ');
    if (sp != std::string_view::npos) c->status = static_cast<long>(ParseUint(line.substr(sp + 1, 3)).value_or(0));
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    c->resp_headers.emplace_back(AsciiLower(Trim(line.substr(0, colon))), Trim(line.substr(colon + 1)));
  }
  return size * n;
}

size_t OnWrite(char* p, size_t size, size_t n, void* self) {
  auto* c = static_cast<HttpCall*>(self);
  const size_t len = size * n;
  const bool ok = Ok(c->status);
  if (c->on_data && ok) {
    if (!c->headers_done) {
      c->headers_done = true;
      if (c->on_headers) {
        c->callback_status = c->on_headers(c->resp_headers);
        if (!c->callback_status.ok()) return 0;
      }
    }
    c->delivered = true;
    c->callback_status = (*c->on_data)(p, len);
    return c->callback_status.ok() ? len : 0;
  }
  const size_t limit = ok ? kMaxDocBody : kMaxErrorBody;
  if (c->resp_body.size() + len > limit) {
    if (ok) {  // a reply the client must parse whole: never a truncated one
      c->callback_status = Status::IOError(std::string(c->error_prefix) + "[reply larger than " +
                                           std::to_string(limit) + " bytes: " + c->what + "]");
      return 0;
    }
    c->resp_body.append(p, limit - std::min(limit, c->resp_body.size()));  // enough of an error to name it
    return len;
  }
  c->resp_body.append(p, len);
  return len;
}

size_t OnRead(char* buf, size_t size, size_t n, void* self) {
  auto* c = static_cast<HttpCall*>(self);
  auto got = (*c->body)(buf, size * n);
  if (!got.ok()) {
    c->callback_status = got.status();
    return CURL_READFUNC_ABORT;
  }
  return *got;
}

}  // namespace

const std::string* HttpCall::Header(std::string_view name) const {
  for (auto& [k, v] : resp_headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string PercentEncode(std::string_view v) {
  // Exactly what curl_easy_escape leaves alone (its handle argument is ignored since 7.82).
  char* escaped = curl_easy_escape(nullptr, v.data(), static_cast<int>(v.size()));
  if (escaped == nullptr) return {};  // out of memory
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

Status PerformHttp(CurlHandles& handles, HttpCall& call, std::string_view error_prefix, std::string_view describe,
                   const HttpErrorOf& error_of) {
  GlobalInit();
  call.error_prefix = error_prefix;
  Status last;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) {
      // Exponential backoff with jitter: ~100, 200, 400 ms.
      thread_local std::mt19937 rng{std::random_device{}()};
      auto base = 100 << (attempt - 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(base + static_cast<int>(rng() % (base / 2 + 1))));
      if (call.body) {
        if (!call.rewind) return last;
        if (Status st = (*call.rewind)(); !st.ok()) return st;
      }
    }
    call.status = 0;
    call.resp_headers.clear();
    call.resp_body.clear();
    call.callback_status = Status::OK();
    call.headers_done = false;

    CURL* c = handles.Get();
    if (!c) return Status::IOError(std::string(error_prefix) + "[curl_easy_init failed]");
    curl_slist* hdrs = nullptr;
    for (auto& h : call.headers) hdrs = curl_slist_append(hdrs, h.c_str());
    hdrs = curl_slist_append(hdrs, "Expect:");  // no 100-continue round trip before a PUT body

    curl_easy_setopt(c, CURLOPT_URL, call.url.c_str());
    UseCaBundle(c);
    // Only HTTP(S), and no redirects are followed (CURLOPT_FOLLOWLOCATION is off); should that
    // change, they stay on HTTP(S) too.
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, kReceiveBuffer);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, kLowSpeedSecs);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &call);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnWrite);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &call);
    if (call.configure) call.configure(c);
    if (call.method == "HEAD") {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (call.method == "PUT" || (call.method == "POST" && call.body)) {
      curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(call.upload_size.value_or(0)));
      curl_easy_setopt(c, CURLOPT_READFUNCTION, &OnRead);
      curl_easy_setopt(c, CURLOPT_READDATA, &call);
      if (call.method == "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");  // a streamed POST body
    } else if (call.method == "POST") {
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.post_body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, call.post_body.data());
    } else if (call.method != "GET") {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    const std::string curl_error = curl_easy_strerror(rc);
    curl_slist_free_all(hdrs);
    handles.Put(c);
    call.status = status;

    if (!call.callback_status.ok()) return call.callback_status;  // the caller stopped the transfer
    if (rc != CURLE_OK) {
      last = Status::IOError(std::string(error_prefix) + "[" + curl_error + "] (" + call.what + "; " +
                             std::string(describe) + ")");
      if (call.delivered) return last;
      continue;
    }
    if (Ok(status)) {
      if (call.on_headers && !call.headers_done) {  // an empty body: no write callback came
        call.headers_done = true;
        return call.on_headers(call.resp_headers);
      }
      return Status::OK();
    }
    last = error_of(call);
    if (!Retryable(status) || call.delivered) return last;
  }
  return last;
}

Status BackendStatus(int http_status, std::string text) {
  switch (http_status) {
    case 400: return Status::InvalidArgument(std::move(text));
    case 401: return Status::Unauthorized(std::move(text));
    case 403: return Status::Forbidden(std::move(text));
    case 409: return Status::Conflict(std::move(text));
    case 412: return Status::PreconditionFailed(std::move(text));
    case 416: return Status::RangeNotSatisfiable(std::move(text));
    case 429: return Status::TooManyRequests(std::move(text));
    case 503: return Status::Unavailable(std::move(text));
    default: return Status::IOError(std::move(text));
  }
}

}  // namespace ais
