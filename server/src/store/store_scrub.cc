// The scrub's check of one object and its quarantine (docs/storage-format.md, "Damage").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>

#include "store/bck.h"
#include "store/header_cache.h"
#include "store/store.h"
#include "util/file.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace ais {
namespace {

Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Status::FromErrno(errno, "mkdir " + dir);
  return Status::OK();
}

}  // namespace

Status Store::ScrubObject(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                          std::string* damage, uint64_t* bytes) {
  damage->clear();
  *bytes = 0;
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status().IsNotFound() ? Status::OK() : fd.status();  // deleted meanwhile
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "fstat " + path);
  std::string upload_id;
  Status found;
  auto h = OpenFileHandle(bucket, name, std::move(*fd));  // this file: no copy stands in for it
  if (!h.ok()) {
    found = h.status();
  } else {
    upload_id = h->meta().upload_id;
    *bytes = h->meta().size;
    auto segs = h->Slice(0, h->meta().size);  // every chunk file, even without a checksum
    found = segs.ok() ? h->VerifyChecksum() : segs.status();
  }
  if (found.ok() || found.code() == Status::Code::kConflict) return Status::OK();  // sound, or overwritten
  if (found.code() != Status::Code::kCorruption) return found;  // an I/O error is not proof of damage
  // A chunk on a disabled mountpath looks missing: while one is down, report and move nothing.
  if (mps_.num_disabled() > 0) {
    return Status::Corruption(found.message() + " (not quarantined while a mountpath is disabled)");
  }
  Status q = Quarantine(bucket, mp, name, path, st.st_dev, st.st_ino, upload_id, found.message());
  if (q.code() == Status::Code::kConflict) return Status::OK();  // replaced meanwhile: the new one is not ours
  if (q.ok()) *damage = found.message();
  if (q.ok() && mirror_.MayHaveCopies(bucket)) QueueRepair(bucket, name);  // restored from a good copy
  return q;
}

Status Store::Quarantine(const std::string& bucket, size_t mp, const std::string& name, const std::string& path,
                         uint64_t dev, uint64_t ino, const std::string& upload_id, const std::string& reason) {
  // Under the stripe lock no commit or delete can replace the object file between the identity
  // check and the rename that takes it out of the namespace.
  std::lock_guard lock(committer_.StripeFor(bucket, name));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Conflict(path + " is gone");
    return Status::FromErrno(errno, "lstat " + path);
  }
  if (st.st_dev != dev || st.st_ino != ino) return Status::Conflict(path + " was replaced");
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string id = std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) + "-" +
                         RandomId(8);
  auto qdir = [&](size_t m) { return mps_.WorkDir(m) + "/" + kQuarantineDir + "/" + id; };
  auto make_qdir = [&](size_t m) -> Status {
    AIS_RETURN_IF_ERROR(MakeDir(mps_.WorkDir(m) + "/" + kQuarantineDir));
    return MakeDir(qdir(m));
  };
  AIS_RETURN_IF_ERROR(make_qdir(mp));
  nlohmann::json info = {{"bucket", bucket}, {"name", name}, {"reason", reason}, {"upload_id", upload_id},
                         {"path", path}};
  AIS_RETURN_IF_ERROR(AtomicWriteFile(qdir(mp) + "/info.json", JsonText(info), committer_.fsync()));
  // Chunks first, the object file last: a crash in between leaves the object in place with
  // chunks missing (an error on read, never bytes) for the next scrub to take away; the other
  // order would leave chunk directories that nothing references or ever removes.
  if (!upload_id.empty()) {
    for (size_t m = 0; m < mps_.size(); ++m) {
      std::string src = mps_.ChunkDir(m, bucket, upload_id);
      if (::access(src.c_str(), F_OK) != 0) continue;
      AIS_RETURN_IF_ERROR(make_qdir(m));
      if (::rename(src.c_str(), (qdir(m) + "/chunks").c_str()) != 0) return Status::FromErrno(errno, "rename " + src);
    }
  }
  if (::rename(path.c_str(), (qdir(mp) + "/object").c_str()) != 0) return Status::FromErrno(errno, "rename " + path);
  Headers().ForgetPath(path);
  if (committer_.fsync()) AIS_RETURN_IF_ERROR(FsyncDir(DirName(path)));
  std::string root = mps_.ObjectsDir(mp, bucket);  // prune now-empty parents, as Delete does
  for (std::string dir = DirName(path); dir.size() > root.size(); dir = DirName(dir)) {
    if (::rmdir(dir.c_str()) != 0) break;
  }
  return Status::OK();
}

}  // namespace ais
