#include "download/link_fetch.h"

#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "util/strings.h"

namespace ais {
namespace {

constexpr long kConnectTimeoutMs = 10'000;  // AIS cmn.DfltDialupTimeout
constexpr long kHeadTimeoutMs = 5'000;      // AIS ext/dload headReqTimeout
constexpr long kMaxRedirects = 10;          // Go's http.Client default

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HostOf(const std::string& link) {
  std::string_view rest = link;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) rest.remove_prefix(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (!rest.empty() && rest[0] == '[') return LowerAscii(rest.substr(1, rest.find(']') - 1));
  return LowerAscii(rest.substr(0, rest.find(':')));
}

// What one transfer's callbacks share. Lives on FetchLink's stack for the transfer.
struct Transfer {
  const LinkFetchOptions* opts = nullptr;
  CURL* curl = nullptr;
  std::string refused;  // set by the egress guard: "<ip> (<reason>)"
  std::vector<std::pair<std::string, std::string>> reply_headers;  // of the last response
  // Body (GET only): the sink opens at the first byte of a successful reply.
  const std::string* link = nullptr;
  FetchSink* sink = nullptr;
  bool opened = false;
  Status write_error;

  std::string Header(std::string_view key) const {
    for (const auto& [k, v] : reply_headers) {
      if (IEquals(k, key)) return v;
    }
    return "";
  }
  long ResponseCode() const {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return code;
  }
  Status OpenSink() {
    std::optional<uint64_t> size;
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length >= 0) {
      size = static_cast<uint64_t>(length);
      if (opts->total) opts->total->store(length, std::memory_order_relaxed);
    }
    auto custom = SourceMetadata(*link, [this](std::string_view k) { return Header(k); });
    std::sort(custom.begin(), custom.end());
    opened = true;
    return sink->Open(size, std::move(custom));
  }
};

curl_socket_t OpenGuardedSocket(void* clientp, curlsocktype purpose, curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(clientp);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  std::string why = EgressRefusal(&addr->addr, addr->addrlen, t->opts->egress);
  if (!why.empty()) {
    if (t->refused.empty()) t->refused = AddressText(&addr->addr, addr->addrlen) + " (" + why + ")";
    return CURL_SOCKET_BAD;
  }
  return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

size_t OnHeader(char* data, size_t size, size_t n, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    t->reply_headers.clear();  // a new response (after a redirect or a 100)
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
    if (t->reply_headers.size() < 256) t->reply_headers.emplace_back(std::string(line.substr(0, colon)), std::string(v));
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  const size_t len = size * n;
  const long code = t->ResponseCode();
  if (code < 200 || code >= 300) return len;  // not the file (an error, a redirect not followed): dropped
  if (!t->opened) {
    if (Status st = t->OpenSink(); !st.ok()) {
      t->write_error = st;
      return 0;  // fails the transfer (CURLE_WRITE_ERROR)
    }
  }
  size_t done = 0;
  while (done < len) {
    int64_t chunk = static_cast<int64_t>(len - done);
    if (t->opts->throttle) {
      chunk = t->opts->throttle->Acquire(chunk, t->opts->aborted);
      if (chunk == 0) return 0;  // aborted while waiting for budget
    }
    if (Status st = t->sink->Write(data + done, static_cast<size_t>(chunk)); !st.ok()) {
      t->write_error = st;
      return 0;
    }
    done += static_cast<size_t>(chunk);
    if (t->opts->downloaded) t->opts->downloaded->fetch_add(chunk, std::memory_order_relaxed);
  }
  return len;
}

int OnProgress(void* userp, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(userp);
  return t->opts->aborted && t->opts->aborted() ? 1 : 0;
}

// The options every request of a download sets: the guard, no proxy from the environment (the
// guard checks the address libcurl connects to, which would be the proxy's), http(s) only.
curl_slist* SetCommon(CURL* c, Transfer* t, const std::string& link,
                      const std::vector<std::pair<std::string, std::string>>* headers) {
  curl_easy_setopt(c, CURLOPT_URL, link.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, kMaxRedirects);
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, &OpenGuardedSocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, t);
  curl_slist* list = nullptr;
  if (headers) {
    for (const auto& [k, v] : *headers) list = curl_slist_append(list, (k + ": " + v).c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  return list;
}

struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::vector<std::pair<std::string, std::string>> SourceMetadata(
    const std::string& link, const std::function<std::string(std::string_view)>& header) {
  std::vector<std::pair<std::string, std::string>> md;
  const std::string host = HostOf(link);
  auto add = [&](std::string key, std::string value) {
    if (!value.empty()) md.emplace_back(std::move(key), std::move(value));
  };
  if (host == "storage.googleapis.com" || host.ends_with(".storage.googleapis.com") || host == "www.googleapis.com") {
    md.emplace_back("source", "gcp");
    add("version", header("x-goog-generation"));
  } else if (host == "s3.amazonaws.com" || host.ends_with(".amazonaws.com")) {
    md.emplace_back("source", "aws");
    add("version", header("x-amz-version-id"));
    std::string etag = header("ETag");
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    add("ETag", etag);
  } else if (host.ends_with(".blob.core.windows.net")) {
    md.emplace_back("source", "azure");
  } else {
    md.emplace_back("source", "web");
  }
  return md;
}

std::unique_ptr<FetchSink> ObjectSink(Store& store, std::string bucket, std::string name) {
  class Sink : public FetchSink {
   public:
    Sink(Store& store, std::string bucket, std::string name)
        : store_(store), bucket_(std::move(bucket)), name_(std::move(name)) {}
    Status Open(std::optional<uint64_t> size, std::vector<std::pair<std::string, std::string>> custom) override {
      PutOptions po;
      po.size = size;
      po.custom = std::move(custom);
      auto w = store_.BeginPut(bucket_, name_, std::move(po));
      if (!w.ok()) return w.status();
      writer_ = std::move(*w);
      return Status::OK();
    }
    Status Write(const char* data, size_t len) override { return writer_->Write(data, len); }
    Result<ObjectMeta> Commit() override {
      ObjectMeta meta;
      AIS_RETURN_IF_ERROR(writer_->Commit(&meta));
      return meta;
    }

   private:
    Store& store_;
    const std::string bucket_, name_;
    std::unique_ptr<ObjectWriter> writer_;
  };
  return std::make_unique<Sink>(store, std::move(bucket), std::move(name));
}

Result<ObjectMeta> FetchLink(CURL* curl, const std::string& link, const LinkFetchOptions& opts, FetchSink& sink,
                             FetchFailure* failure) {
  *failure = {};
  Transfer t;
  t.opts = &opts;
  t.curl = curl;
  t.link = &link;
  t.sink = &sink;
  std::unique_ptr<curl_slist, SlistFree> headers(SetCommon(curl, &t, link, opts.headers));
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, opts.timeout.count())));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(kConnectTimeoutMs, static_cast<long>(opts.timeout.count())));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 256L << 10);
  if (opts.downloaded) opts.downloaded->store(0, std::memory_order_relaxed);
  if (opts.total) opts.total->store(0, std::memory_order_relaxed);

  const CURLcode rc = curl_easy_perform(curl);
  const std::string quoted = "\"" + link.substr(0, 512) + "\"";
  if (!t.refused.empty()) {
    return Status::Forbidden("failed to download " + quoted + ": dload: egress blocked: " + t.refused);
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK || (opts.aborted && opts.aborted())) {
    return Status::Unavailable("download of " + quoted + " aborted");
  }
  if (!t.write_error.ok()) {
    return t.write_error;  // the store refused (full disk: kInsufficientStorage) - not retried
  }
  const long code = t.ResponseCode();
  if (rc == CURLE_OK && (code < 200 || code >= 300)) {
    static constexpr long kTerminal[] = {401, 402, 403, 404, 405, 406, 407, 410};
    // As AIS: another attempt after any error status but these (a 3xx not followed: none).
    failure->retry = code >= 400 && std::find(std::begin(kTerminal), std::end(kTerminal), code) == std::end(kTerminal);
    std::string msg = "failed to download " + quoted + ": status " + std::to_string(code);
    return code == 404 ? Status::NotFound(msg) : Status::InvalidArgument(msg);
  }
  if (rc != CURLE_OK) {
    failure->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    failure->retry = rc != CURLE_UNSUPPORTED_PROTOCOL && rc != CURLE_URL_MALFORMAT && rc != CURLE_TOO_MANY_REDIRECTS &&
                     rc != CURLE_COULDNT_RESOLVE_HOST;
    return Status::IOError("failed to download " + quoted + ": " + curl_easy_strerror(rc));
  }
  if (!t.opened) {  // an empty body: no byte opened the sink
    if (Status st = t.OpenSink(); !st.ok()) return st;
  }
  return sink.Commit();
}

Result<LinkHead> HeadLink(CURL* curl, const std::string& link, const EgressPolicy& egress,
                          const std::vector<std::pair<std::string, std::string>>* headers) {
  LinkFetchOptions opts;
  opts.egress = egress;
  Transfer t;
  t.opts = &opts;
  t.curl = curl;
  std::unique_ptr<curl_slist, SlistFree> list(SetCommon(curl, &t, link, headers));
  curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, kHeadTimeoutMs);
  const CURLcode rc = curl_easy_perform(curl);
  const std::string quoted = "\"" + link.substr(0, 512) + "\"";
  if (!t.refused.empty()) return Status::Forbidden("HEAD " + quoted + ": dload: egress blocked: " + t.refused);
  if (rc != CURLE_OK) return Status::IOError("HEAD " + quoted + ": " + curl_easy_strerror(rc));
  const long code = t.ResponseCode();
  if (code >= 400) return Status::InvalidArgument("HEAD " + quoted + ": status " + std::to_string(code));
  LinkHead head;
  curl_off_t length = -1;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  head.size = length;
  head.custom = SourceMetadata(link, [&t](std::string_view k) { return t.Header(k); });
  return head;
}

}  // namespace ais
