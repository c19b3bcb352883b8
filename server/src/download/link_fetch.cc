#include "download/link_fetch.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "util/ca_bundle.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr long kConnectTimeoutMs = 10'000;  // AIS cmn.DfltDialupTimeout
constexpr long kHeadTimeoutMs = 5'000;      // AIS ext/dload headReqTimeout
constexpr long kMaxRedirects = 10;          // Go's http.Client default

std::string HostOf(const std::string& link) {
  std::string_view rest = link;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) rest.remove_prefix(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (!rest.empty() && rest[0] == '[') return AsciiLower(rest.substr(1, rest.find(']') - 1));
  return AsciiLower(rest.substr(0, rest.find(':')));
}

// "bytes FIRST-LAST/TOTAL" (RFC 9110 §14.4; a known total only).
bool ParseContentRange(std::string_view v, uint64_t* first, uint64_t* total) {
  if (!v.starts_with("bytes ")) return false;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  auto num = [](std::string_view t, uint64_t* out) {
    if (t.empty() || t.size() > 19) return false;
    uint64_t n = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    *out = n;
    return true;
  };
  uint64_t last = 0;
  return num(v.substr(0, dash), first) && num(v.substr(dash + 1, slash - dash - 1), &last) &&
         num(v.substr(slash + 1), total) && *first <= last && last < *total;
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
    FetchedReply reply;
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length >= 0) reply.length = static_cast<uint64_t>(length);
    if (ResponseCode() == 206) {
      reply.partial = true;
      if (!ParseContentRange(Header("Content-Range"), &reply.first, &reply.total) || !reply.length) {
        return Status::IOError("failed to download \"" + link->substr(0, 512) + "\": a 206 reply without a valid "
                               "Content-Range and Content-Length");
      }
    }
    if (opts->total) {
      const uint64_t size = reply.partial ? reply.total : reply.length.value_or(0);
      if (size > 0) opts->total->store(static_cast<int64_t>(size), std::memory_order_relaxed);
    }
    reply.etag = Header("ETag");
    reply.custom = SourceMetadata(*link, [this](std::string_view k) { return Header(k); });
    std::sort(reply.custom.begin(), reply.custom.end());
    opened = true;
    return sink->Open(std::move(reply));
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
  UseCaBundle(c);
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

namespace {

// One GET of `link` (of bytes `range`, "first-last", when not empty) into `sink`, committed.
Result<ObjectMeta> Perform(CURL* curl, const std::string& link, const LinkFetchOptions& opts, const std::string& range,
                           FetchSink& sink, FetchFailure* failure) {
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
  curl_easy_setopt(curl, CURLOPT_RANGE, range.empty() ? nullptr : range.c_str());

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

std::string RangeText(uint64_t first, uint64_t len) { return std::to_string(first) + "-" + std::to_string(first + len - 1); }

// A multipart upload's part: the 206 for exactly [first, first + len) of the file the first
// reply described.
class PartSink : public FetchSink {
 public:
  PartSink(Store& store, const std::string& bucket, const std::string& name, const std::string& upload, uint32_t num,
           uint64_t first, uint64_t len, const FetchedReply& file)
      : store_(store), bucket_(bucket), name_(name), upload_(upload), num_(num), first_(first), len_(len), file_(file) {}
  Status Open(FetchedReply reply) override {
    if (!reply.partial || reply.first != first_ || reply.length != len_ || reply.total != file_.total ||
        reply.etag != file_.etag) {
      return Status::Conflict("the file changed during its download (a range came back as another file's)");
    }
    auto w = store_.MpuPart(bucket_, name_, upload_, num_, len_);
    if (!w.ok()) return w.status();
    writer_ = std::move(*w);
    return Status::OK();
  }
  Status Write(const char* data, size_t len) override { return writer_->Write(data, len); }
  Result<ObjectMeta> Commit() override {
    if (!writer_) return Status::IOError("range " + RangeText(first_, len_) + ": no body");
    AIS_RETURN_IF_ERROR(writer_->Commit());
    return ObjectMeta{};
  }

 private:
  Store& store_;
  const std::string &bucket_, &name_, &upload_;
  const uint32_t num_;
  const uint64_t first_, len_;
  const FetchedReply& file_;
  std::unique_ptr<PartWriter> writer_;
};

class StoreSink : public FetchSink {
 public:
  StoreSink(Store& store, std::string bucket, std::string name, std::optional<RangeFetch> ranges,
            WriteThroughFn through)
      : store_(store),
        bucket_(std::move(bucket)),
        name_(std::move(name)),
        ranges_(std::move(ranges)),
        through_(std::move(through)) {}
  ~StoreSink() override {
    if (!upload_.empty()) (void)store_.MpuAbort(bucket_, name_, upload_);
  }

  Status Open(FetchedReply reply) override {
    if (reply.partial && (reply.first != 0 || !ranges_)) {
      return Status::IOError("a 206 reply for bytes " + std::to_string(reply.first) + ".. of a file not asked in ranges");
    }
    if (reply.partial && reply.total > *reply.length) {  // the first range of a longer file
      file_ = std::move(reply);
      auto upload = store_.MpuCreate(bucket_, name_, file_.custom);
      if (!upload.ok()) return upload.status();
      upload_ = std::move(*upload);
      auto part = store_.MpuPart(bucket_, name_, upload_, 1, *file_.length);
      if (!part.ok()) return part.status();
      first_part_ = std::move(*part);
      return Status::OK();
    }
    PutOptions po;
    po.size = reply.length;
    po.custom = std::move(reply.custom);
    auto w = store_.BeginPut(bucket_, name_, std::move(po));
    if (!w.ok()) return w.status();
    writer_ = std::move(*w);
    return Status::OK();
  }

  Status Write(const char* data, size_t len) override {
    return first_part_ ? first_part_->Write(data, len) : writer_->Write(data, len);
  }

  Result<ObjectMeta> Commit() override {
    ObjectMeta meta;
    if (writer_) {
      AIS_RETURN_IF_ERROR(CommitThrough(*writer_, &meta, through_));
      return meta;
    }
    AIS_RETURN_IF_ERROR(first_part_->Commit());
    AIS_RETURN_IF_ERROR(FetchRest());
    const uint64_t first_len = *file_.length, rest = file_.total - first_len;
    const uint32_t nparts = 1 + static_cast<uint32_t>((rest + ranges_->part_size - 1) / ranges_->part_size);
    std::vector<uint32_t> parts(nparts);
    for (uint32_t k = 0; k < nparts; ++k) parts[k] = k + 1;
    AIS_RETURN_IF_ERROR(store_.MpuComplete(bucket_, name_, upload_, std::move(parts), {}, &meta, through_));
    upload_.clear();  // completed: nothing to abort
    return meta;
  }

 private:
  static constexpr int kPartAttempts = 3;

  // Parts 2.. by the range workers; the first error stops the others at their next part.
  Status FetchRest() {
    const RangeFetch& rf = *ranges_;
    const uint64_t first_len = *file_.length, rest = file_.total - first_len;
    const uint64_t nrest = (rest + rf.part_size - 1) / rf.part_size;
    std::atomic<uint64_t> next{0};
    std::mutex mu;
    Status failure;
    auto fail = [&](Status st) {
      std::lock_guard lock(mu);
      if (failure.ok()) failure = std::move(st);
      next.store(nrest);
    };
    auto work = [&] {
      CURL* curl = rf.curls->Get();
      if (curl == nullptr) return fail(Status::IOError("libcurl: out of handles"));
      for (uint64_t k = next++; k < nrest; k = next++) {
        const uint64_t first = first_len + k * rf.part_size;
        const uint64_t len = std::min(rf.part_size, file_.total - first);
        Status st;
        for (int attempt = 0; attempt < kPartAttempts; ++attempt) {
          if (attempt > 0) curl_easy_reset(curl);
          PartSink part(store_, bucket_, name_, upload_, static_cast<uint32_t>(k + 2), first, len, file_);
          FetchFailure why;
          auto got = Perform(curl, rf.link, *rf.opts, RangeText(first, len), part, &why);
          st = got.status();
          if (st.ok() || !why.retry) break;
        }
        if (!st.ok()) {
          fail(std::move(st));
          break;
        }
        curl_easy_reset(curl);
      }
      rf.curls->Put(curl);
    };
    const int threads = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(std::max(1, rf.workers)), nrest));
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    return failure;
  }

  Store& store_;
  const std::string bucket_, name_;
  const std::optional<RangeFetch> ranges_;
  const WriteThroughFn through_;
  std::unique_ptr<ObjectWriter> writer_;  // the whole file in one reply
  // Or a multipart upload: the first reply's range as part 1.
  FetchedReply file_;
  std::string upload_;
  std::unique_ptr<PartWriter> first_part_;
};

}  // namespace

std::unique_ptr<FetchSink> ObjectSink(Store& store, std::string bucket, std::string name,
                                      std::optional<RangeFetch> ranges, WriteThroughFn through) {
  return std::make_unique<StoreSink>(store, std::move(bucket), std::move(name), std::move(ranges), std::move(through));
}

Result<ObjectMeta> FetchLink(CURL* curl, const std::string& link, const LinkFetchOptions& opts, FetchSink& sink,
                             FetchFailure* failure) {
  if (opts.downloaded) opts.downloaded->store(0, std::memory_order_relaxed);
  if (opts.total) opts.total->store(0, std::memory_order_relaxed);
  const std::string range = opts.first_range > 0 ? RangeText(0, opts.first_range) : "";
  auto got = Perform(curl, link, opts, range, sink, failure);
  // 416: an empty file has no first range (RFC 9110 §14.1.2): ask for all of it.
  if (!got.ok() && !range.empty() && got.status().message().ends_with(": status 416")) {
    curl_easy_reset(curl);
    got = Perform(curl, link, opts, "", sink, failure);
  }
  return got;
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
