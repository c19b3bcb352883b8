#include "remote/cache_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include "metrics/metrics.h"
#include "remote/azure_client.h"
#include "remote/gcs_client.h"
#include "remote/s3_client.h"
#include "store/bck.h"
#include "util/file.h"
#include "util/log_ring.h"

namespace ais {
namespace {

// Blob downloads (AIS xact/xs/blob_download.go): chunk sizes and workers.
constexpr uint64_t kBlobChunkDefault = 4 << 20;
constexpr uint64_t kBlobChunkMin = 32 << 10;
constexpr uint64_t kBlobChunkMax = 16 << 20;
constexpr uint64_t kBlobAutoWorkers = 8;
constexpr uint64_t kBlobMaxWorkers = 32;
constexpr uint32_t kMultipartThreads = 4;  // parts of one upload in flight at once

std::string Rfc3339(int64_t unix_ns) {
  time_t t = static_cast<time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, n);
}

// Go's http.CanonicalHeaderKey: "x-amz-meta-foo-bar" -> "X-Amz-Meta-Foo-Bar".
std::string CanonicalHeader(std::string s) {
  bool up = true;
  for (char& c : s) {
    c = static_cast<char>(up ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
    up = c == '-';
  }
  return s;
}

AwsBucketConfig ConfigOf(const BucketProps& p) {
  return {.profile = p.aws_profile,
          .endpoint = p.aws_endpoint,
          .region = p.aws_region,
          .path_style = (p.features & BucketProps::kFeatS3PathStyle) != 0};
}

}  // namespace

struct CacheTier::Flight {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;                                       // guarded by mu
  Result<ObjectMeta> result = Status::IOError("pending");  // guarded by mu
};

CacheTier::CacheTier(Store& store, CacheTierOptions opts)
    : store_(store), opts_(opts), pool_(opts.max_threads, std::chrono::seconds(30)) {}

CacheTier::~CacheTier() { pool_.Shutdown(); }

std::vector<std::pair<std::string, std::string>> CacheTier::CustomFrom(const RemoteObjectAttrs& a) {
  std::vector<std::pair<std::string, std::string>> md = {{"source", a.provider}};
  if (!a.etag.empty()) md.emplace_back("ETag", a.etag);
  if (!a.md5.empty()) md.emplace_back("md5", a.md5);
  if (!a.crc32c.empty()) md.emplace_back("crc32c", a.crc32c);
  if (a.mtime_ns > 0) md.emplace_back("LastModified", Rfc3339(a.mtime_ns));
  if (!a.last_modified.empty()) md.emplace_back("Last-Modified", a.last_modified);
  if (!a.version.empty()) md.emplace_back("version", a.version);
  if (a.provider != kProviderAws) return md;  // user metadata: AIS keeps S3's only
  for (auto& [k, v] : a.user_meta) {
    if (k == "ais-cksum-type" || k == "ais-cksum-val") continue;
    md.emplace_back("X-Amz-Meta-" + CanonicalHeader(k), v);
  }
  return md;
}

ObjectMeta CacheTier::MetaFrom(const std::string& name, const RemoteObjectAttrs& a) {
  ObjectMeta m;
  m.name = name;
  m.size = a.size;
  m.custom = CustomFrom(a);
  std::sort(m.custom.begin(), m.custom.end());
  return m;
}

Status CacheTier::CheckEnabled(std::string_view provider) {
  if (provider == kProviderAws) {
    if (!opts_.aws_enabled) return Status::NotFound("AWS backend is missing in the cluster configuration");
    return Status::OK();
  }
  if (provider == kProviderGcp) return GcsClientOf().status();
  if (provider == kProviderAzure) return AzureClientOf().status();
  if (provider == kProviderAis) return Status::OK();  // a remote cluster's bucket: its key names an attached one
  return Status::NotSupported("provider \"" + std::string(provider) +
                              "\" is not served by this server (only ais, aws, gcp and azure)");
}

Status CacheTier::CreateOnRemoteAis(const std::string& key) {
  auto client = ais_clusters_.ClientOf(KeyNs(key).uuid);
  if (!client.ok()) return client.status();
  return (*client)->CreateBucket(BackendBucket(key));
}

Status CacheTier::DestroyOnRemoteAis(const std::string& key) {
  auto client = ais_clusters_.ClientOf(KeyNs(key).uuid);
  if (!client.ok()) return client.status();
  return (*client)->DestroyBucket(BackendBucket(key));
}

Result<std::shared_ptr<RemoteBackend>> CacheTier::GcsClientOf() {
  {
    std::lock_guard lock(mu_);
    if (gcs_) return gcs_;
  }
  // Resolved once, on first use, as Google's client libraries read their environment once; an
  // environment that says nothing usable is asked again next time (the error names what to set).
  auto settings = ResolveGcsSettings([](const char* name) -> const char* { return std::getenv(name); });
  if (!settings.ok()) return settings.status();
  std::lock_guard lock(mu_);
  if (!gcs_) {
    LogInfo("gcp backend: " + settings->Describe());
    gcs_ = std::make_shared<GcsClient>(std::move(*settings));
  }
  return gcs_;
}

Result<std::shared_ptr<RemoteBackend>> CacheTier::AzureClientOf() {
  {
    std::lock_guard lock(mu_);
    if (azure_) return azure_;
  }
  // Resolved once, on first use, as AIS builds its azure client once; an environment that says
  // nothing usable is asked again next time (the error names what to set).
  auto settings = ResolveAzureSettings([](const char* name) -> const char* { return std::getenv(name); });
  if (!settings.ok()) return settings.status();
  std::lock_guard lock(mu_);
  if (!azure_) {
    LogInfo("azure backend: " + settings->Describe());
    azure_ = std::make_shared<AzureClient>(std::move(*settings));
  }
  return azure_;
}

Result<std::shared_ptr<RemoteBackend>> CacheTier::CloudClientFor(std::string_view provider, const BucketProps& props) {
  if (provider == kProviderGcp) return GcsClientOf();
  if (provider == kProviderAzure) return AzureClientOf();
  if (provider != kProviderAws) AIS_RETURN_IF_ERROR(CheckEnabled(provider));
  const AwsBucketConfig cfg = ConfigOf(props);
  AIS_RETURN_IF_ERROR(CheckEndpoint(cfg.endpoint));  // (props set before the operator's list changed)
  const std::string id = cfg.profile + '\n' + cfg.endpoint + '\n' + cfg.region + '\n' + (cfg.path_style ? "p" : "v");
  {
    std::lock_guard lock(mu_);
    if (auto it = clients_.find(id); it != clients_.end()) return it->second;
  }
  // Resolved once per bucket config, as the AWS SDKs read their environment and shared files
  // once: not on every request.
  auto settings = ResolveAwsSettings(cfg);
  if (!settings.ok()) return settings.status();
  std::lock_guard lock(mu_);
  auto& c = clients_[id];
  if (!c) c = std::make_shared<S3Client>(std::move(*settings));
  return c;
}

Result<std::shared_ptr<RemoteBackend>> CacheTier::ClientFor(const std::string& key) {
  auto props = store_.GetBucket(key);
  if (!props.ok()) return props.status();
  return ClientFor(key, *props);
}

Result<std::shared_ptr<RemoteBackend>> CacheTier::ClientFor(const std::string& key, const BucketProps& props) {
  if (!IsRemoteAisKey(key)) return CloudClientFor(KeyProvider(key), props);
  auto client = ais_clusters_.ClientOf(KeyNs(key).uuid);
  if (!client.ok()) return client.status();
  return std::shared_ptr<RemoteBackend>(*client);
}

std::string CacheTier::BackendBucket(const std::string& key) {
  return IsRemoteAisKey(key) ? AisBucketArg(key) : std::string(KeyName(key));
}

Status CacheTier::AddBucket(const std::string& key) {
  const std::string_view provider = KeyProvider(key);
  AIS_RETURN_IF_ERROR(CheckEnabled(provider));
  if (store_.buckets().Get(key)) return Status::OK();
  const std::string name = BackendBucket(key);
  BucketProps defaults;
  auto client = ClientFor(key, defaults);
  if (!client.ok()) return client.status();
  auto info = (*client)->HeadBucket(name);
  if (auto* s3 = dynamic_cast<S3Client*>(client->get());
      s3 && info.ok() && !info->region.empty() && info->region != s3->settings().region) {
    defaults.aws_region = info->region;  // the bucket lives elsewhere: ask there
    client = ClientFor(key, defaults);
    if (!client.ok()) return client.status();
    info = (*client)->HeadBucket(name);
  }
  if (!info.ok()) return info.status();
  nlohmann::json props = {{"versioning", {{"enabled", info->versioning}}}};
  if (!info->region.empty()) props["extra"] = {{"aws", {{"cloud_region", info->region}}}};
  Status st = store_.CreateBucket(key, props);
  if (st.code() == Status::Code::kAlreadyExists) return Status::OK();  // added meanwhile
  if (st.ok()) LogInfo("added remote bucket " + BucketCname(key) + " (" + (*client)->Describe() + ")");
  return st;
}

Result<ObjectMeta> CacheTier::Fetch(const std::string& key, const std::string& name, ColdTee* tee) {
  auto props = store_.GetBucket(key);
  if (!props.ok()) return props.status();
  if (props->features & BucketProps::kFeatDisableColdGet) {
    return Status::NotFound(ObjectCname(key, name) + " does not exist (cold GET disabled)");
  }
  AIS_RETURN_IF_ERROR(store_.capacity().CheckWrite());  // out of space: 507 before asking the backend, as AIS
  auto client = ClientFor(key, *props);
  if (!client.ok()) return client.status();
  std::unique_ptr<ObjectWriter> w;
  auto on_attrs = [&](const RemoteObjectAttrs& a) -> Status {
    PutOptions o;
    o.size = a.size;
    o.custom = CustomFrom(a);
    o.cksum_from_store = true;  // a mismatch is damaged remote data, not a bad request
    if (props->validate_cold_get) {
      std::string type, value;
      for (auto& [k, v] : a.user_meta) {
        if (k == "ais-cksum-type") type = v;
        if (k == "ais-cksum-val") value = v;
      }
      if (type.empty() || value.empty()) {  // else the MD5 the backend states, if it states one
        value = a.md5;
        type = value.empty() ? "" : "md5";
      }
      o.client_cksum_type = type;
      o.client_cksum_value = value;
    }
    w.reset();  // a retried GET starts over
    auto r = store_.BeginPut(key, name, std::move(o));
    if (!r.ok()) return r.status();
    w = std::move(*r);
    if (tee) tee->attrs(a);
    return Status::OK();
  };
  // With a tee, every byte but the last is passed on once written; the last waits for the commit.
  std::optional<char> held;
  auto on_data = [&](const char* p, size_t n) -> Status {
    AIS_RETURN_IF_ERROR(w->Write(p, n));
    if (!tee || n == 0) return Status::OK();
    if (held) AIS_RETURN_IF_ERROR(tee->data(&*held, 1));
    held = p[n - 1];
    return n > 1 ? tee->data(p, n - 1) : Status::OK();
  };
  AIS_RETURN_IF_ERROR((*client)->GetObject(BackendBucket(key), name, std::nullopt, on_attrs, on_data, nullptr));
  if (!w) return Status::IOError(std::string(KeyProvider(key)) + "-error[no reply body: " + ObjectCname(key, name) + "]");
  ObjectMeta m;
  AIS_RETURN_IF_ERROR(w->Commit(&m));
  // The object is in: a reader that went away meanwhile is no failure of the fetch.
  if (held) (void)tee->data(&*held, 1);
  return m;
}

namespace {

// A blob download's chunks, fetched concurrently and committed in any order, passed on to a
// ColdTee in order: whichever worker commits the next chunk due reads it back from its file
// (the page cache) and delivers it and every later chunk already committed, while the other
// workers go on fetching. The object's last byte is held back for Finish, after the commit.
class InOrderTee {
 public:
  InOrderTee(ColdTee& tee, uint64_t nchunks, uint64_t size) : tee_(tee), ready_(nchunks), size_(size) {}

  // Chunk k (at offset `off`, `len` bytes) is committed at `path`. Returns a delivery error.
  Status Committed(uint64_t k, uint64_t off, uint64_t len, const std::string& path) {
    std::unique_lock lock(mu_);
    ready_[k] = Chunk{.path = path, .off = off, .len = len};
    if (delivering_) return Status::OK();  // the worker delivering will come to it
    delivering_ = true;
    Status st;
    while (st.ok() && next_ < ready_.size() && ready_[next_]) {
      Chunk c = std::move(*ready_[next_]);
      lock.unlock();
      st = Deliver(c);
      lock.lock();
      ++next_;
    }
    delivering_ = false;
    return st;
  }

  // After the commit: the held-back last byte.
  Status Finish() { return last_ ? tee_.data(&*last_, 1) : Status::OK(); }

 private:
  struct Chunk {
    std::string path;
    uint64_t off = 0;
    uint64_t len = 0;
  };

  Status Deliver(const Chunk& c) {
    auto fd = OpenFile(c.path, O_RDONLY);
    if (!fd.ok()) return fd.status();
    std::string buf(std::min<uint64_t>(c.len, 1 << 20), '\0');
    for (uint64_t at = 0; at < c.len;) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), c.len - at));
      const ssize_t got = ::pread(fd->get(), buf.data(), want, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return Status::FromErrno(errno, "read " + c.path);
      if (got == 0) return Status::Corruption(c.path + ": chunk shorter than written");
      size_t n = static_cast<size_t>(got);
      at += n;
      if (c.off + at == size_) last_ = buf[--n];  // the object's last byte waits for the commit
      if (n > 0) AIS_RETURN_IF_ERROR(tee_.data(buf.data(), n));
    }
    return Status::OK();
  }

  ColdTee& tee_;
  std::mutex mu_;
  std::vector<std::optional<Chunk>> ready_;  // guarded by mu_: committed, not yet delivered
  uint64_t next_ = 0;                        // guarded by mu_: the next chunk to deliver
  bool delivering_ = false;                  // guarded by mu_: a worker is delivering
  const uint64_t size_;
  std::optional<char> last_;  // written once, by the worker delivering the last chunk
};

}  // namespace

Result<ObjectMeta> CacheTier::FetchBlob(const std::string& key, const std::string& name, const BlobOptions& blob,
                                        ColdTee* tee) {
  auto props = store_.GetBucket(key);
  if (!props.ok()) return props.status();
  AIS_RETURN_IF_ERROR(store_.capacity().CheckWrite());
  auto client = ClientFor(key, *props);
  if (!client.ok()) return client.status();
  const std::string bucket = BackendBucket(key);
  auto attrs = (*client)->HeadObject(bucket, name);
  if (!attrs.ok()) return attrs.status();
  const uint64_t size = attrs->size;
  if (size == 0) return Fetch(key, name, tee);
  uint64_t chunk = std::clamp<uint64_t>(blob.chunk_size ? blob.chunk_size : kBlobChunkDefault, kBlobChunkMin,
                                        kBlobChunkMax);
  chunk = std::max<uint64_t>(chunk, (size + kMaxChunks - 1) / kMaxChunks);
  const uint64_t nchunks = (size + chunk - 1) / chunk;
  const uint64_t workers = blob.workers < 0    ? 1
                           : blob.workers == 0 ? std::min<uint64_t>(nchunks, kBlobAutoWorkers)
                                               : std::min<uint64_t>({static_cast<uint64_t>(blob.workers), nchunks,
                                                                     kBlobMaxWorkers});
  auto upload = store_.MpuCreate(key, name, CustomFrom(*attrs));
  if (!upload.ok()) return upload.status();
  std::optional<InOrderTee> in_order;
  if (tee) {
    tee->attrs(*attrs);
    in_order.emplace(*tee, nchunks, size);
  }

  std::atomic<uint64_t> next{0};
  std::mutex err_mu;
  Status first_error;
  auto fail = [&](Status st) {
    std::lock_guard lock(err_mu);
    if (first_error.ok()) first_error = std::move(st);
    next.store(nchunks);  // the other workers stop at their next chunk
  };
  auto work = [&] {
    for (uint64_t k = next++; k < nchunks; k = next++) {
      const uint64_t off = k * chunk;
      const uint64_t len = std::min(chunk, size - off);
      auto part = store_.MpuPart(key, name, *upload, static_cast<uint32_t>(k + 1), len);
      if (!part.ok()) return fail(part.status());
      auto same_object = [&](const RemoteObjectAttrs& a) -> Status {
        if (a.size != size || a.etag != attrs->etag) {
          return Status::Conflict(ObjectCname(key, name) + " changed remotely during its blob download");
        }
        return Status::OK();
      };
      auto into_part = [&](const char* p, size_t n) { return (*part)->Write(p, n); };
      Status st = (*client)->GetObject(bucket, name, std::make_pair(off, len), same_object, into_part, &*attrs);
      if (st.ok()) st = (*part)->Commit();
      if (st.ok() && in_order) st = in_order->Committed(k, off, len, (*part)->path());
      if (!st.ok()) return fail(st);
    }
  };
  std::vector<std::thread> threads;
  for (uint64_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (!first_error.ok()) {
    (void)store_.MpuAbort(key, name, *upload);
    return first_error;
  }
  std::vector<uint32_t> parts(nchunks);
  for (uint64_t k = 0; k < nchunks; ++k) parts[k] = static_cast<uint32_t>(k + 1);
  AIS_RETURN_IF_ERROR(store_.MpuComplete(key, name, *upload, std::move(parts)));
  if (in_order) (void)in_order->Finish();  // committed: a reader gone by now changes nothing
  return store_.Head(key, name);
}

Result<ObjectMeta> CacheTier::ColdGet(const std::string& key, const std::string& name, bool replace,
                                      const std::optional<BlobOptions>& blob, ColdTee* tee, bool* teed) {
  if (teed) *teed = false;
  const std::string fk = key + '\n' + name;
  std::shared_ptr<Flight> f;
  bool leader = false;
  {
    std::lock_guard lock(mu_);
    auto& slot = flights_[fk];
    if (!slot) {
      slot = std::make_shared<Flight>();
      leader = true;
    }
    f = slot;
  }
  if (!leader) {
    std::unique_lock lock(f->mu);
    f->cv.wait(lock, [&] { return f->done; });
    return f->result;
  }
  Result<ObjectMeta> r = Status::IOError("pending");
  if (!replace) r = store_.Head(key, name);  // a fetch that finished just before this one began
  if (replace || !r.ok()) {
    r = blob ? FetchBlob(key, name, *blob, tee) : Fetch(key, name, tee);
    if (teed) *teed = tee != nullptr;
    if (r.ok()) ServerMetrics().RecordColdGet(r->size);
  }
  {
    std::lock_guard lock(mu_);
    flights_.erase(fk);
  }
  {
    std::lock_guard lock(f->mu);
    f->result = r;
    f->done = true;
  }
  f->cv.notify_all();
  return r;
}

bool CacheTier::Fetching(const std::string& key, const std::string& name) {
  std::lock_guard lock(mu_);
  return flights_.count(key + '\n' + name) > 0;
}

Result<bool> CacheTier::InSync(const std::string& key, const ObjectMeta& local) {
  auto remote = Head(key, local.name);
  if (!remote.ok()) return remote.status();
  if (remote->size != local.size) return false;
  const std::string* version = local.custom_value("version");
  if (version && !remote->version.empty()) return *version == remote->version;
  const std::string* etag = local.custom_value("ETag");
  if (etag && !remote->etag.empty()) return *etag == remote->etag;
  return true;
}

WriteThroughFn CacheTier::UploadThrough(const std::string& key, const std::string& name) {
  return [this, key, name](const std::vector<FileSegment>& segs,
                           uint64_t size) -> Result<std::vector<std::pair<std::string, std::string>>> {
    auto attrs = Upload(key, name, segs, size);
    if (!attrs.ok()) return attrs.status();
    return CustomFrom(*attrs);
  };
}

Result<RemoteObjectAttrs> CacheTier::Head(const std::string& key, const std::string& name) {
  auto client = ClientFor(key);
  if (!client.ok()) return client.status();
  return (*client)->HeadObject(BackendBucket(key), name);
}

Result<RemoteListPage> CacheTier::List(const std::string& key, const std::string& prefix, const std::string& token,
                                       uint32_t max_keys, bool delimited, const std::string& start_after) {
  auto client = ClientFor(key);
  if (!client.ok()) return client.status();
  return (*client)->ListObjects(BackendBucket(key), prefix, token, max_keys, delimited, start_after);
}

namespace {

// Reads [begin, end) of the concatenation of `segs` (a written object's files), for a PUT body.
class SegmentsReader {
 public:
  SegmentsReader(const std::vector<FileSegment>& segs, uint64_t begin, uint64_t end, std::string what)
      : segs_(segs), begin_(begin), end_(end), what_(std::move(what)) {}

  Result<size_t> Read(char* buf, size_t len) {
    while (pos_ < end_ - begin_) {
      // The segment holding absolute offset begin_ + pos_.
      uint64_t abs = begin_ + pos_, seg_start = 0;
      size_t i = 0;
      while (i < segs_.size() && seg_start + segs_[i].len <= abs) seg_start += segs_[i++].len;
      if (i == segs_.size()) break;
      const uint64_t in_seg = abs - seg_start;
      const size_t n = static_cast<size_t>(std::min<uint64_t>({len, segs_[i].len - in_seg, end_ - abs}));
      ssize_t got = ::pread(segs_[i].fd, buf, n, static_cast<off_t>(segs_[i].offset + in_seg));
      if (got > 0) {
        pos_ += static_cast<uint64_t>(got);
        return static_cast<size_t>(got);
      }
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) return Status::Corruption(what_ + ": file shorter than written");
      return Status::FromErrno(errno, "read " + what_);
    }
    return size_t{0};
  }
  void Rewind() { pos_ = 0; }

 private:
  const std::vector<FileSegment>& segs_;
  const uint64_t begin_, end_;
  const std::string what_;
  uint64_t pos_ = 0;
};

}  // namespace

uint64_t MultipartPartSize(int64_t multipart_size, uint64_t size) {
  if (multipart_size < 0) return 0;
  uint64_t part = multipart_size == 0 ? kDefaultMultipartSize : static_cast<uint64_t>(multipart_size);
  if (size <= part) return 0;
  // S3 takes at most 10000 parts: larger objects get larger parts.
  constexpr uint64_t kMaxParts = 10'000;
  if (size > part * kMaxParts) part = (size + kMaxParts - 1) / kMaxParts;
  return part;
}

Result<RemoteObjectAttrs> CacheTier::Upload(const std::string& key, const std::string& name,
                                            const std::vector<FileSegment>& segs, uint64_t size) {
  auto props = store_.GetBucket(key);
  if (!props.ok()) return props.status();
  auto client = ClientFor(key, *props);
  if (!client.ok()) return client.status();
  RemoteBackend& backend = **client;
  const std::string bucket = BackendBucket(key);
  const std::string what = ObjectCname(key, name);

  const uint64_t part_size = backend.has_multipart() ? MultipartPartSize(props->aws_multipart_size, size) : 0;
  if (part_size == 0) {
    SegmentsReader reader(segs, 0, size, what);
    RemoteBackend::ReadBody body = [&](char* buf, size_t len) { return reader.Read(buf, len); };
    std::function<Status()> rewind = [&] {
      reader.Rewind();
      return Status::OK();
    };
    return backend.PutObject(bucket, name, size, body, rewind, {});
  }

  // Multipart: parts uploaded by a few threads at once; any failure aborts the upload, so the
  // backend keeps no orphaned parts (and the object is not created).
  auto upload_id = backend.CreateMultipartUpload(bucket, name, {});
  if (!upload_id.ok()) return upload_id.status();
  const uint32_t parts = static_cast<uint32_t>((size + part_size - 1) / part_size);
  std::vector<std::string> etags(parts);
  std::atomic<uint32_t> next{0};
  std::mutex mu;
  Status failed;  // guarded by mu
  auto work = [&] {
    for (uint32_t i; (i = next.fetch_add(1)) < parts;) {
      {
        std::lock_guard lock(mu);
        if (!failed.ok()) return;
      }
      const uint64_t begin = uint64_t{i} * part_size, end = std::min(size, begin + part_size);
      SegmentsReader reader(segs, begin, end, what);
      RemoteBackend::ReadBody body = [&](char* buf, size_t len) { return reader.Read(buf, len); };
      std::function<Status()> rewind = [&] {
        reader.Rewind();
        return Status::OK();
      };
      auto etag = backend.UploadPart(bucket, name, *upload_id, i + 1, end - begin, body, rewind);
      std::lock_guard lock(mu);
      if (!etag.ok()) {
        if (failed.ok()) failed = etag.status();
        return;
      }
      etags[i] = std::move(*etag);
    }
  };
  std::vector<std::thread> threads;
  const uint32_t nthreads = std::min<uint32_t>(parts, kMultipartThreads);
  for (uint32_t t = 1; t < nthreads; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  Result<RemoteObjectAttrs> done = failed.ok() ? backend.CompleteMultipartUpload(bucket, name, *upload_id, etags)
                                               : Result<RemoteObjectAttrs>(failed);
  if (!done.ok()) {
    if (Status st = backend.AbortMultipartUpload(bucket, name, *upload_id); !st.ok()) {
      LogError("abort multipart upload of " + what + ": " + st.message());
    }
    return done.status();
  }
  done->size = size;
  return done;
}

Status CacheTier::DeleteRemote(const std::string& key, const std::string& name) {
  auto client = ClientFor(key);
  if (!client.ok()) return client.status();
  return (*client)->DeleteObject(BackendBucket(key), name);
}

Result<std::vector<std::string>> CacheTier::ListBuckets(std::string_view provider) {
  if (provider == kProviderAws && !opts_.aws_enabled) return std::vector<std::string>{};
  auto client = CloudClientFor(provider, BucketProps{});
  if (!client.ok()) return client.status();
  return (*client)->ListBuckets();
}

}  // namespace ais
