#include "etl/transformer_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>

namespace ais::etl {

namespace {

constexpr size_t kErrorBodyMax = 64 << 10;

struct Exchange {
  const TransformCall* call = nullptr;
  const OnReplyStart* on_start = nullptr;
  const OnReplyData* on_data = nullptr;
  CURL* curl = nullptr;
  long status = 0;
  std::optional<uint64_t> length;
  bool started = false;
  bool delivered = false;  // a byte reached on_data
  std::string error_body;  // an error reply's body (bounded)
  Status failure;          // a callback's error, which aborted the transfer

  static size_t OnHeader(char* data, size_t size, size_t n, void* self) {
    auto* x = static_cast<Exchange*>(self);
    std::string_view line(data, size * n);
    if (line.starts_with("HTTP/")) {
      x->length.reset();  // a new reply (after a 100 Continue)
      return size * n;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string name(line.substr(0, colon));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (name == "content-length") {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        uint64_t len = 0;
        size_t i = 0;
        for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) len = len * 10 + static_cast<uint64_t>(v[i] - '0');
        if (i > 0) x->length = len;
      }
    }
    return size * n;
  }

  static size_t OnWrite(char* data, size_t size, size_t n, void* self) {
    auto* x = static_cast<Exchange*>(self);
    const size_t len = size * n;
    if (!x->started) {
      curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->status);
      x->started = true;
      if (x->status < 400) {
        if (Status st = (*x->on_start)(static_cast<int>(x->status), x->length); !st.ok()) {
          x->failure = st;
          return CURL_WRITEFUNC_ERROR;
        }
      }
    }
    if (x->status >= 400) {
      x->error_body.append(data, std::min(len, kErrorBodyMax - std::min(kErrorBodyMax, x->error_body.size())));
      return len;
    }
    if (len == 0) return 0;
    x->delivered = true;
    if (Status st = (*x->on_data)(data, len); !st.ok()) {
      x->failure = st;
      return CURL_WRITEFUNC_ERROR;
    }
    return len;
  }

  static size_t OnRead(char* buf, size_t size, size_t n, void* self) {
    auto* x = static_cast<Exchange*>(self);
    auto got = x->call->read_body(buf, size * n);
    if (!got.ok()) {
      x->failure = got.status();
      return CURL_READFUNC_ABORT;
    }
    return *got;
  }
};

}  // namespace

Status TransformerError(long status, const std::string& body) {
  std::string msg = "ETL error: " + body;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  if (status == 404) return Status::NotFound(std::move(msg));
  if (status == 429) return Status::TooManyRequests(std::move(msg));
  if (status == 503) return Status::Unavailable(std::move(msg));
  if (status < 500) return Status::InvalidArgument(std::move(msg));
  return Status::IOError(std::move(msg));
}

TransformerClient::TransformerClient(std::string base_url)
    : base_url_(std::move(base_url)), handles_(std::make_unique<CurlHandles>()) {}

TransformerClient::~TransformerClient() = default;

Result<int> TransformerClient::Call(const TransformCall& call, const OnReplyStart& on_start,
                                    const OnReplyData& on_data) {
  const std::string url = base_url_ + call.path_and_query;
  for (int attempt = 1;; ++attempt) {
    CURL* c = handles_->Get();
    if (!c) return Status::IOError("ETL: curl_easy_init failed");
    Exchange x;
    x.call = &call;
    x.on_start = &on_start;
    x.on_data = &on_data;
    x.curl = c;
    curl_slist* hdrs = nullptr;
    for (const auto& [k, v] : call.headers) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
    hdrs = curl_slist_append(hdrs, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(call.timeout.count()));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &Exchange::OnHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Exchange::OnWrite);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L << 10);
    if (call.method == "PUT") {
      curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(call.body_size));
      if (call.read_body) {
        curl_easy_setopt(c, CURLOPT_READFUNCTION, &Exchange::OnRead);
        curl_easy_setopt(c, CURLOPT_READDATA, &x);
      }
    } else if (call.method != "GET") {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    }
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK && !x.started) {  // a reply with no body
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x.status);
      x.started = true;
      if (x.status < 400) {
        if (Status st = on_start(static_cast<int>(x.status), x.length); !st.ok()) x.failure = st;
      }
    }
    curl_slist_free_all(hdrs);
    handles_->Put(c);
    if (!x.failure.ok()) return x.failure;
    if (rc == CURLE_COULDNT_CONNECT && attempt < kTransformerConnectTries && !x.delivered) {
      std::this_thread::sleep_for(kTransformerConnectPause);
      continue;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return Status::IOError("ETL error: no reply within obj_timeout " + std::to_string(call.timeout.count()) + "ms");
    }
    if (rc != CURLE_OK) return Status::IOError(std::string("ETL error: ") + curl_easy_strerror(rc));
    if (x.status >= 400) return TransformerError(x.status, x.error_body);
    return static_cast<int>(x.status);
  }
}

Status TransformerClient::Health(std::chrono::milliseconds timeout) {
  TransformCall call{.method = "GET", .path_and_query = "/health", .headers = {}, .body_size = 0, .read_body = {},
                     .timeout = timeout};
  auto st = Call(call, [](int, std::optional<uint64_t>) { return Status::OK(); },
                 [](const char*, size_t) { return Status::OK(); });
  if (!st.ok()) return st.status();
  return *st == 200 ? Status::OK() : Status::Unavailable("health: status " + std::to_string(*st));
}

}  // namespace ais::etl
