#include "store/committer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <shared_mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "store/bck.h"
#include "store/header_cache.h"
#include "store/object_handle.h"
#include "store/sorted_walker.h"
#include "util/file.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kChunkMarkerPrefix = "chunks-";
constexpr const char* kMoveMarkerPrefix = "moving-";

// Copies the whole of `in` (size bytes) to `out`: in the kernel where it can, else through a buffer.
Status CopyFileBytes(int in, int out, uint64_t size) {
  off_t in_off = 0, out_off = 0;
  bool kernel = true;
  while (static_cast<uint64_t>(in_off) < size && kernel) {
    ssize_t n = ::copy_file_range(in, &in_off, out, &out_off, size - static_cast<uint64_t>(in_off), 0);
    if (n > 0) continue;
    if (n == 0) return Status::IOError("copy: the source shrank");
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return Status::FromErrno(errno, "copy_file_range");
    kernel = false;
  }
  std::vector<char> buf(1 << 20);
  while (static_cast<uint64_t>(in_off) < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - static_cast<uint64_t>(in_off)));
    AIS_RETURN_IF_ERROR(PreadAll(in, buf.data(), want, static_cast<uint64_t>(in_off)));
    AIS_RETURN_IF_ERROR(PwriteAll(out, buf.data(), want, static_cast<uint64_t>(out_off)));
    in_off += static_cast<off_t>(want);
    out_off += static_cast<off_t>(want);
  }
  return Status::OK();
}

// Reads the committed object's header, if any.
Result<ObjectMeta> ReadMetaAt(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  uint64_t off = 0;
  return ReadObjectHeader(fd->get(), &off);
}

bool IsMissing(const Status& s) { return s.IsNotFound(); }

// Gives the header just committed as `path` (the file open as `fd`) to the HeaderCache, so that a
// listing need not read it back.
void KeepHeader(const std::string& path, int fd, ObjectMeta* meta) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Headers().ForgetPath(path);
    return;
  }
  std::string name;
  name.swap(meta->name);  // the cache's copy goes without it (the file names it)
  auto kept = std::make_shared<const ObjectMeta>(*meta);
  meta->name = std::move(name);
  Headers().PutPath(path, static_cast<uint64_t>(st.st_ino), std::move(kept));
}

}  // namespace

Status Committer::Reconcile(size_t mp) {
  for (const std::string& bucket : buckets_.Names()) {
    SortedWalker walker(mps_.ObjectsDir(mp, bucket), "", "");
    std::string name, path;
    for (;;) {
      auto more = walker.Next(&name, &path);
      if (!more.ok()) {
        if (more.status().IsNotFound()) break;  // no objects dir for this bucket there
        return more.status();
      }
      if (!*more) break;
      for (size_t m = 0; m < mps_.size(); ++m) {
        if (m == mp || !mps_.enabled(m)) continue;
        const std::string other = mps_.ObjectPath(m, bucket, name);
        if (::access(other.c_str(), F_OK) != 0) continue;
        std::lock_guard lock(StripeFor(bucket, name));
        auto here = ReadMetaAt(path);
        auto there = ReadMetaAt(other);
        if (!there.ok()) break;  // the copy in service stays; this one is shadowed below
        bool keep_here = here.ok() && (here->version > there->version ||
                                       (here->version == there->version && here->atime_ns > there->atime_ns));
        const std::string& loser = keep_here ? other : path;
        const Result<ObjectMeta>& lm = keep_here ? there : here;
        ::unlink(loser.c_str());
        Headers().ForgetPath(loser);
        if (lm.ok() && lm.value().chunked()) DropChunks(keep_here ? m : mp, bucket, lm.value().upload_id);
        break;
      }
    }
    // Mirror copies there that fell behind their object while the mountpath was away.
    SortedWalker copies(mps_.MirrorDir(mp, bucket), "", "");
    for (;;) {
      auto more = copies.Next(&name, &path);
      if (!more.ok() || !*more) break;
      std::lock_guard lock(StripeFor(bucket, name));
      auto at = volume_.LocateObject(bucket, name);
      if (!at) continue;  // the object is nowhere else: the copy may be all there is
      auto object = ReadMetaAt(mps_.ObjectPath(*at, bucket, name));
      auto copy = ReadMetaAt(path);
      if (object.ok() && !(copy.ok() && copy->version == object->version && copy->cksum_value == object->cksum_value)) {
        ::unlink(path.c_str());
      }
    }
  }
  return Status::OK();
}

Status Committer::Recover() {
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    // Interrupted writes of the BMD, the state file and the header snapshot sit next to them
    // (AtomicWriteFile's "<file>.tmp.<n>").
    if (DIR* d = ::opendir(mps_.path(mp).c_str())) {
      while (dirent* de = ::readdir(d)) {
        std::string n = de->d_name;
        if (n.starts_with(".ais.") && n.find(".tmp.") != std::string::npos) ::unlink((mps_.path(mp) + "/" + n).c_str());
      }
      ::closedir(d);
    }
    std::string work = mps_.WorkDir(mp);
    DIR* d = ::opendir(work.c_str());
    if (d == nullptr) return Status::FromErrno(errno, "opendir " + work);
    std::vector<std::string> names;
    while (dirent* de = ::readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    ::closedir(d);
    for (auto& n : names) {
      std::string path = work + "/" + n;
      if (n == kQuarantineDir) continue;  // damaged objects the scrub set aside: kept
      if (n.starts_with(kMoveMarkerPrefix)) {  // a move cut short: finished if its copy is in place
        auto content = ReadFile(path);
        auto j = content.ok() ? nlohmann::json::parse(*content, nullptr, false) : nlohmann::json();
        if (j.is_object() && j.contains("from") && j["from"].is_string() && j.contains("to") && j["to"].is_string()) {
          const std::string from = j["from"], to = j["to"];
          if (::access(to.c_str(), F_OK) == 0 && ::unlink(from.c_str()) == 0) Headers().ForgetPath(from);
        }
        ::unlink(path.c_str());
        continue;
      }
      if (!n.starts_with(kChunkMarkerPrefix)) {  // temp files and trash of destroyed buckets
        AIS_RETURN_IF_ERROR(RemoveTree(path));
        continue;
      }
      std::string upload_id = n.substr(std::strlen(kChunkMarkerPrefix));
      auto content = ReadFile(path);
      auto j = content.ok() ? nlohmann::json::parse(*content, nullptr, false) : nlohmann::json();
      if (!j.is_object() || !j.contains("bucket") || !j.contains("name")) {
        ::unlink(path.c_str());  // a marker torn before its rename never guarded a chunk
        continue;
      }
      std::string bucket = j["bucket"], name = j["name"];
      auto at = volume_.LocateObject(bucket, name);
      auto meta = at ? ReadMetaAt(mps_.ObjectPath(*at, bucket, name)) : Result<ObjectMeta>(Status::NotFound(name));
      if (!(meta.ok() && meta->upload_id == upload_id)) {
        for (size_t m = 0; m < mps_.size(); ++m) {
          if (mps_.enabled(m)) AIS_RETURN_IF_ERROR(RemoveTree(mps_.ChunkDir(m, bucket, upload_id)));
        }
      }
      ::unlink(path.c_str());
    }
  }
  return Status::OK();
}

Status Committer::RemoveStaleTemps(std::chrono::seconds age, const std::function<bool()>& stop,
                                   const std::function<void(uint64_t bytes)>& removed) {
  namespace fs = std::filesystem;
  const auto cutoff = fs::file_time_type::clock::now() - age;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    std::error_code ec;
    for (fs::directory_iterator it(mps_.WorkDir(mp), ec), end; !ec && it != end; it.increment(ec)) {
      if (stop()) return Status::OK();
      std::error_code fec;
      const fs::path& p = it->path();
      if (p.extension() != ".tmp" || !it->is_regular_file(fec)) continue;
      auto mtime = it->last_write_time(fec);
      if (fec || mtime > cutoff) continue;
      uint64_t size = it->file_size(fec);
      if (::unlink(p.c_str()) == 0) removed(size);
    }
  }
  return Status::OK();
}

namespace {

// The bytes of the regular files under `path` (what removing it frees, near enough).
uint64_t TreeBytes(const std::string& path) {
  namespace fs = std::filesystem;
  uint64_t n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) n += it->file_size(fec);
  }
  return n;
}

}  // namespace

Status Committer::RemoveLeftovers(std::chrono::seconds age, const std::function<bool()>& stop,
                                  const std::function<void(uint64_t bytes)>& removed) {
  namespace fs = std::filesystem;
  const auto cutoff = fs::file_time_type::clock::now() - age;
  auto old_enough = [&](const fs::directory_entry& e) {
    std::error_code ec;
    auto t = e.last_write_time(ec);
    return !ec && t <= cutoff;
  };
  auto remove = [&](const std::string& path) {
    uint64_t bytes = TreeBytes(path);
    if (RemoveTree(path).ok()) removed(bytes);
  };
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(mps_.WorkDir(mp), ec), end; !ec && it != end; it.increment(ec)) {
      if (stop()) return Status::OK();
      const std::string n = it->path().filename().string();
      if (!old_enough(*it)) continue;
      if (n.starts_with("trash-")) {
        remove(it->path().string());
      } else if (n.starts_with(kChunkMarkerPrefix)) {
        auto content = ReadFile(it->path().string());
        auto j = content.ok() ? nlohmann::json::parse(*content, nullptr, false) : nlohmann::json();
        if (j.is_object() && j.contains("bucket") && j["bucket"].is_string() &&
            !buckets_.Get(j["bucket"].get<std::string>())) {
          ::unlink(it->path().c_str());
          removed(0);
        }
      }
    }
    // Bucket directories: <mp>/ais/<name>, <mp>/<provider>/<name> and, a level down,
    // <mp>/ais/@<uuid>#<ns>/<name> (bck.h keys).
    std::vector<std::pair<std::string, std::string>> parents;  // (directory, key prefix)
    for (const std::string_view provider : {kProviderAis, kProviderAws, kProviderGcp, kProviderAzure}) {
      const std::string p(provider);
      parents.emplace_back(mps_.path(mp) + "/" + p, p == "ais" ? "" : p + "/");
    }
    for (fs::directory_iterator it(mps_.path(mp) + "/ais", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string ns = it->path().filename().string();
      if (ns.starts_with('@')) parents.emplace_back(it->path().string(), "ais/" + ns + "/");
    }
    ec.clear();
    for (const auto& [parent, prefix] : parents) {
      for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
        if (stop()) return Status::OK();
        const std::string name = it->path().filename().string();
        if (name.starts_with('@')) continue;  // a namespace (its buckets: below)
        const std::string key = prefix + name;
        if (buckets_.Get(key) || !old_enough(*it)) continue;
        // Out of the namespace at once (a rename), then deleted.
        const std::string trash = mps_.WorkDir(mp) + "/trash-" + RandomId(12);
        if (::rename(it->path().c_str(), trash.c_str()) == 0) remove(trash);
      }
    }
  }
  return Status::OK();
}

std::set<std::string> Committer::ChunkMarkers() const {
  namespace fs = std::filesystem;
  std::set<std::string> out;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(mps_.WorkDir(mp), ec), end; !ec && it != end; it.increment(ec)) {
      const std::string n = it->path().filename().string();
      if (n.starts_with(kChunkMarkerPrefix)) out.insert(n.substr(std::strlen(kChunkMarkerPrefix)));
    }
  }
  return out;
}

Status Committer::RemoveUnreferencedChunks(const std::string& bucket, const std::set<std::string>& keep,
                                           std::chrono::seconds age, const std::function<bool()>& stop,
                                           const std::function<void(uint64_t bytes)>& removed) {
  namespace fs = std::filesystem;
  const auto cutoff = fs::file_time_type::clock::now() - age;
  for (size_t mp = 0; mp < mps_.size(); ++mp) {
    if (!mps_.enabled(mp)) continue;
    const std::string parent = mps_.BucketDir(mp, bucket) + "/%ch";
    std::error_code ec;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
      if (stop()) return Status::OK();
      const std::string id = it->path().filename().string();
      std::error_code tec;
      const auto t = it->last_write_time(tec);
      if (keep.contains(id) || tec || t > cutoff) continue;
      const std::string dir = mps_.ChunkDir(mp, bucket, id);
      const uint64_t bytes = TreeBytes(dir);
      if (RemoveTree(dir).ok()) removed(bytes);
    }
  }
  return Status::OK();
}

std::mutex& Committer::StripeFor(const std::string& bucket, const std::string& name) {
  uint64_t h = XXH64(name.data(), name.size(), XXH64(bucket.data(), bucket.size(), 0));
  return stripes_[h % stripes_.size()];
}

Status Committer::Move(const std::string& bucket, const std::string& from, size_t to_mp, const std::string& to,
                       uint64_t* bytes) {
  auto in = OpenFile(from, O_RDONLY);
  if (!in.ok()) return in.status();
  struct stat st {};
  if (::fstat(in->get(), &st) != 0) return Status::FromErrno(errno, "fstat " + from);
  *bytes = static_cast<uint64_t>(st.st_size);
  const std::string temp = TempPath(to_mp);
  const std::string marker = mps_.WorkDir(to_mp) + "/" + kMoveMarkerPrefix + RandomId(12);
  auto cleanup = [&](Status st) {
    ::unlink(temp.c_str());
    ::unlink(marker.c_str());
    return st;
  };
  {
    auto out = OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL);
    if (!out.ok()) return out.status();
    if (Status c = CopyFileBytes(in->get(), out->get(), *bytes); !c.ok()) return cleanup(c);
    if (fsync()) {
      if (Status s = FsyncFd(out->get(), temp); !s.ok()) return cleanup(s);
    }
  }
  nlohmann::json m = {{"bucket", bucket}, {"from", from}, {"to", to}};
  if (Status s = AtomicWriteFile(marker, JsonText(m), fsync()); !s.ok()) return cleanup(s);
  int rc = -1;
  for (int attempt = 0; attempt < 4; ++attempt) {
    rc = ::rename(temp.c_str(), to.c_str());
    if (rc == 0 || errno != ENOENT) break;
    if (!buckets_.Get(bucket)) return cleanup(BucketRegistry::NotFound(bucket));  // its dirs went to trash
    if (Status s = MkdirAll(DirName(to)); !s.ok()) return cleanup(s);
  }
  if (rc != 0) return cleanup(Status::FromErrno(errno, "rename " + temp + " " + to));
  if (fsync()) (void)FsyncDir(DirName(to));
  Headers().ForgetPath(to);
  ::unlink(from.c_str());
  Headers().ForgetPath(from);
  ::unlink(marker.c_str());
  return Status::OK();
}

std::string Committer::TempPath(size_t mp) const { return mps_.WorkDir(mp) + "/" + RandomId(16) + ".tmp"; }
Status Committer::WriteChunkMarker(size_t mp, const std::string& bucket, const std::string& name,
                                   const std::string& upload_id) {
  nlohmann::json j = {{"bucket", bucket}, {"name", name}};
  return AtomicWriteFile(mps_.WorkDir(mp) + "/" + kChunkMarkerPrefix + upload_id, JsonText(j), fsync());
}

void Committer::ForgetChunkMarker(size_t mp, const std::string& upload_id) {
  ::unlink((mps_.WorkDir(mp) + "/" + kChunkMarkerPrefix + upload_id).c_str());
}

void Committer::DropChunks(size_t mp, const std::string& bucket, const std::string& upload_id) {
  for (size_t m = 0; m < mps_.size(); ++m) {
    if (mps_.enabled(m)) (void)RemoveTree(mps_.ChunkDir(m, bucket, upload_id));
  }
  ForgetChunkMarker(mp, upload_id);
}

Status Committer::MakeChunkDir(size_t mp, const std::string& bucket, const std::string& upload_id) {
  const std::string bucket_dir = mps_.BucketDir(mp, bucket);
  if (::access(bucket_dir.c_str(), F_OK) != 0) {
    // Destroy drops the bucket from the registry before moving its dirs to trash.
    if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
    AIS_RETURN_IF_ERROR(MkdirAll(bucket_dir));  // a mountpath added after the bucket was created
  }
  const std::string chunk_dir = mps_.ChunkDir(mp, bucket, upload_id);
  for (const std::string& dir : {DirName(chunk_dir), chunk_dir}) {
    if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) continue;
    if (errno == ENOENT) return BucketRegistry::NotFound(bucket);
    return Status::FromErrno(errno, "mkdir " + dir);
  }
  return Status::OK();
}

Status Committer::CommitFile(const std::string& bucket, size_t mp, const std::string& temp_path, int temp_fd,
                             bool inline_data, uint64_t data_offset, ObjectMeta* meta,
                             const std::optional<ObjectMeta>& expect, std::string_view body) {
  const std::string path = mps_.ObjectPath(mp, bucket, meta->name);
  std::optional<ObjectMeta> old;
  std::optional<size_t> old_mp;  // the current object lives on another mountpath (see Reconcile)
  {
    std::lock_guard lock(StripeFor(bucket, meta->name));
    auto cur = ReadMetaAt(path);
    if (cur.ok()) {
      old = std::move(*cur);
    } else if (!IsMissing(cur.status()) && cur.status().code() != Status::Code::kCorruption) {
      if (::access(path.c_str(), F_OK) == 0) return cur.status();
    } else if (IsMissing(cur.status()) && volume_.MayBeOffPrimary()) {
      auto at = volume_.LocateObject(bucket, meta->name);
      if (at && *at != mp) {
        auto o = ReadMetaAt(mps_.ObjectPath(*at, bucket, meta->name));
        if (o.ok()) {
          old = std::move(*o);
          old_mp = at;
        }
      }
    }
    if (expect) {
      if (!old || old->version != expect->version || old->upload_id != expect->upload_id) {
        return Status::Conflict(ObjectCname(bucket, meta->name) + " changed concurrently");
      }
      meta->version = expect->version;
    } else {
      meta->version = old ? old->version + 1 : 1;
    }
    uint64_t offset = data_offset;
    std::string header = EncodeObjectHeader(*meta, inline_data, &offset);
    if (offset != data_offset) return Status::Corruption("object header outgrew its reserved space");
    AIS_RETURN_IF_ERROR(body.empty() ? PwriteAll(temp_fd, header.data(), header.size(), 0)
                                     : PwritevAll(temp_fd, header, body, 0));
    if (fsync()) AIS_RETURN_IF_ERROR(FsyncFd(temp_fd, temp_path));
    PreparedCopies copies;
    const bool mirrored = mirror_.MayHaveCopies(bucket);
    if (mirrored) {
      std::vector<UniqueFd> fds;  // the temp file as written (its fd may be write-only), or the chunks
      std::vector<FileSegment> data;
      if (inline_data) {
        if (body.empty() && meta->size > 0) {
          auto fd = OpenFile(temp_path, O_RDONLY);
          if (!fd.ok()) return fd.status();
          data.push_back({fd->get(), data_offset, meta->size});
          fds.push_back(std::move(*fd));
        }
      } else {
        for (size_t i = 0; i < meta->chunk_sizes.size(); ++i) {
          auto fd = OpenChunk(mps_, bucket, meta->upload_id, static_cast<uint32_t>(i + 1));
          if (!fd.ok()) return fd.status();
          data.push_back({fd->get(), 0, meta->chunk_sizes[i]});
          fds.push_back(std::move(*fd));
        }
      }
      AIS_RETURN_IF_ERROR(mirror_.Prepare(bucket, mp, *meta, data, body, &copies));
    }
    struct DropUnplaced {
      PreparedCopies& c;
      ~DropUnplaced() { Mirror::Drop(c); }
    } drop_unplaced{copies};
    if (old && old->chunked()) AIS_RETURN_IF_ERROR(WriteChunkMarker(mp, bucket, meta->name, old->upload_id));
    std::shared_lock leaving(volume_.commit_mu());  // see NoteLeavingFiles
    if (!mps_.enabled(mp)) {  // detached or disabled since the writer chose it
      return Status::Unavailable("mountpath " + mps_.path(mp) + " left while " + ObjectCname(bucket, meta->name) +
                                 " was written; write it again");
    }
    // The object file moves off another mountpath: a walk running meanwhile must not miss it.
    std::optional<RelocationLog::Move> moving;
    if (old_mp) moving.emplace(relocations_, bucket, meta->name);
    // rename() needs the parent directories; a concurrent delete may rmdir them in between.
    int rc = -1;
    for (int attempt = 0; attempt < 4; ++attempt) {
      rc = ::rename(temp_path.c_str(), path.c_str());
      if (rc == 0 || errno != ENOENT) break;
      if (!buckets_.Get(bucket)) return BucketRegistry::NotFound(bucket);
      AIS_RETURN_IF_ERROR(MkdirAll(DirName(path)));
    }
    if (rc != 0) {
      if (errno == ENOTDIR || errno == EISDIR) {
        return Status::Conflict("object name \"" + meta->name + "\" conflicts with an existing object");
      }
      return Status::FromErrno(errno, "rename " + temp_path);
    }
    if (old_mp) {
      const std::string old_path = mps_.ObjectPath(*old_mp, bucket, meta->name);
      ::unlink(old_path.c_str());
      Headers().ForgetPath(old_path);
    }
    KeepHeader(path, temp_fd, meta);
    if (mirrored) mirror_.Place(bucket, meta->name, copies);
    if (mps_.num_leaving() > 0) NoteLeavingFiles(bucket, mp, *meta);
    leaving.unlock();
    if (fsync()) AIS_RETURN_IF_ERROR(FsyncDir(DirName(path)));
  }
  if (old && old->chunked()) DropChunks(mp, bucket, old->upload_id);
  return Status::OK();
}

void Committer::NoteLeavingFiles(const std::string& bucket, size_t mp, const ObjectMeta& meta) {
  bool leaving = !mps_.placeable(mp);
  for (size_t m = 0, used = mps_.size(); !leaving && meta.chunked() && m < used; ++m) {
    if (mps_.state(m) != Mountpaths::State::kLeaving) continue;
    leaving = ::access(mps_.ChunkDir(m, bucket, meta.upload_id).c_str(), F_OK) == 0;
  }
  if (leaving) volume_.NoteLateWrite();
}

Status Committer::CommitChunked(const std::string& bucket, size_t mp, ObjectMeta* meta,
                                const std::optional<ObjectMeta>& expect) {
  std::string temp = TempPath(mp);
  auto fd = OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.status();
  Status st = CommitFile(bucket, mp, temp, fd->get(), false, 0, meta, expect);
  if (!st.ok()) ::unlink(temp.c_str());
  return st;
}

Status Committer::Remove(const std::string& bucket, const std::string& name,
                         const std::function<bool(const ObjectMeta&)>& keep, uint64_t* removed_bytes) {
  ObjectMeta meta;
  size_t mp = 0;
  std::string path;
  {
    std::lock_guard lock(StripeFor(bucket, name));
    auto at = volume_.LocateObject(bucket, name);
    const bool mirrored = mirror_.MayHaveCopies(bucket);
    if (!at) {
      if (mirrored && !keep && mirror_.RemoveCopies(bucket, name) > 0) return Status::OK();  // its file was lost
      return Status::NotFound(ObjNotFoundMessage(bucket, name));
    }
    mp = *at;
    path = mps_.ObjectPath(mp, bucket, name);
    auto cur = ReadMetaAt(path);
    if (cur.ok()) {
      meta = std::move(*cur);
      if (keep && keep(meta)) return Status::Conflict(ObjectCname(bucket, name) + " changed or was read meanwhile");
    } else if (::access(path.c_str(), F_OK) != 0) {
      return Status::NotFound(ObjNotFoundMessage(bucket, name));
    } else if (cur.status().code() != Status::Code::kCorruption) {
      return cur.status();
    }
    // A damaged header still goes: the object file is removed (its chunks, if it had any, are
    // named by the upload id the header held; they are left to the space cleanup).
    if (meta.chunked()) AIS_RETURN_IF_ERROR(WriteChunkMarker(mp, bucket, name, meta.upload_id));
    if (::unlink(path.c_str()) != 0) return Status::FromErrno(errno, "unlink " + path);
    Headers().ForgetPath(path);
    if (mirrored) mirror_.RemoveCopies(bucket, name);
  }
  if (meta.chunked()) DropChunks(mp, bucket, meta.upload_id);
  if (removed_bytes) *removed_bytes = meta.size;
  // Best effort: prune now-empty parent directories (rmdir fails harmlessly on non-empty ones).
  std::string root = mps_.ObjectsDir(mp, bucket);
  for (std::string dir = DirName(path); dir.size() > root.size(); dir = DirName(dir)) {
    if (::rmdir(dir.c_str()) != 0) break;
  }
  return Status::OK();
}

}  // namespace ais
