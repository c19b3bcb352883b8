#include "jobs/bucket_jobs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "archive/archive_writer.h"
#include "store/store.h"
#include "archive/output_sink.h"
#include "archive/shard.h"
#include "store/names.h"
#include "util/clock.h"
#include "util/file.h"

namespace ais {
namespace {

constexpr size_t kIoBuf = 1 << 20;

std::function<bool()> Stopper(const JobControl& jc) {
  return [&jc] { return jc.aborted(); };
}

// Bytes an archive writer produces go into a new object of the store.
class ObjectSink : public OutputSink {
 public:
  explicit ObjectSink(ObjectWriter* w) : w_(w), buf_(kIoBuf) {}
  Status Append(const void* data, size_t len) override { return w_->Write(data, len); }
  Status AppendFile(const FileSegment& seg, std::shared_ptr<const void>) override {
    return StreamSegments({seg}, buf_, [this](const char* p, size_t n) { return w_->Write(p, n); });
  }

 private:
  ObjectWriter* w_;
  std::vector<char> buf_;
};

uint64_t FileSize(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Streams an open file into a new object.
Status PutFromFd(Store& store, const std::string& bucket, const std::string& name, int fd, uint64_t size) {
  PutOptions opts;
  opts.size = size;
  auto w = store.BeginPut(bucket, name, std::move(opts));
  if (!w.ok()) return w.status();
  std::vector<char> buf(kIoBuf);
  ObjectWriter* writer = w->get();
  AIS_RETURN_IF_ERROR(StreamSegments({FileSegment{fd, 0, size}}, buf,
                                     [writer](const char* p, size_t n) { return writer->Write(p, n); }));
  ObjectMeta meta;
  return (*w)->Commit(&meta);
}

// The members of archive object `existing` into `writer`, in order.
Status CopyArchiveMembers(std::shared_ptr<const ObjectHandle> existing, const std::string& archname,
                          ArchiveFormat format, ArchiveWriter& writer) {
  auto shard = Shard::Open(std::move(existing), archname, format);
  if (!shard.ok()) return shard.status();
  return (*shard)->ForEach([&](const Shard::Member& mem) {
    AIS_RETURN_IF_ERROR(writer.BeginEntry(mem.name, mem.size, 0));
    AIS_RETURN_IF_ERROR((*shard)->Read(mem.name, 0, mem.size, [&](const char* d, size_t n) {
      return writer.Write(d, n);
    }));
    return writer.EndEntry();
  });
}


}  // namespace

std::string CopyNaming::Apply(const std::string& name) const {
  std::string out = prepend + name;
  if (ext.empty()) return out;
  auto dot = out.rfind('.');
  auto slash = out.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return out;
  auto it = ext.find(out.substr(dot + 1));
  if (it == ext.end()) return out;
  return out.substr(0, dot + 1) + it->second;
}

Status RunCopyBucket(Store& store, JobControl& jc, const CopyBucketArgs& args) {
  AIS_RETURN_IF_ERROR(store.GetBucket(args.src).status());
  ObjectWalk walk{.prefix = args.prefix, .after = {}, .headers = true, .stop = Stopper(jc)};
  walk.damaged = [&jc, &args](const std::string& name, const Status& why) {  // not copied: the job says so
    jc.AddError(ObjectCname(args.src, name) + ": " + why.message());
    return Status::OK();
  };
  return store.ForEachObject(args.src, walk, [&](const WalkedObject& obj) -> Status {
    if (!args.dry_run) {
      const std::string to = args.naming.Apply(obj.name());
      Status st = store.Copy(args.src, obj.name(), args.dst, to, args.through ? args.through(to) : WriteThroughFn());
      if (st.IsNotFound() && store.GetBucket(args.dst).ok()) return Status::OK();  // deleted meanwhile
      AIS_RETURN_IF_ERROR(st);
    }
    jc.Add(1, static_cast<int64_t>(obj.meta().size));
    return Status::OK();
  });
}

Status RunMoveBucket(Store& store, JobControl& jc, const std::string& src, const std::string& dst) {
  CopyBucketArgs args;
  args.src = src;
  args.dst = dst;
  Status st = RunCopyBucket(store, jc, args);
  if (!st.ok() || jc.aborted()) {
    (void)store.DestroyBucket(dst);
    return st;
  }
  return store.DestroyBucket(src);
}

Status RunDeleteObjects(Store& store, JobControl& jc, const std::string& bucket, const ObjectSelection& sel) {
  return sel.ForEach(store, bucket, Stopper(jc), [&](const std::string& name) {
    Status d = store.Delete(bucket, name);
    if (d.ok()) {
      jc.Add(1, 0);
      return Status::OK();
    }
    if (d.IsNotFound()) {
      if (sel.kind() == ObjectSelection::Kind::kList) jc.AddError(d.message());  // a range need not exist
      return Status::OK();
    }
    return d;
  });
}

Status RunVisitObjects(Store& store, JobControl& jc, const std::string& bucket, const ObjectSelection& sel) {
  return sel.ForEach(store, bucket, Stopper(jc), [&](const std::string& name) {
    auto m = store.Head(bucket, name);
    if (m.ok()) jc.Add(1, static_cast<int64_t>(m->size));
    return Status::OK();
  });
}

Status RunCopyObjects(Store& store, JobControl& jc, const CopyObjectsArgs& args) {
  bool list = args.sel.kind() == ObjectSelection::Kind::kList;
  Status st = args.sel.ForEach(store, args.src, Stopper(jc), [&](const std::string& name) {
    if (args.dry_run) {
      auto m = store.Head(args.src, name);
      if (m.ok()) jc.Add(1, static_cast<int64_t>(m->size));
      return Status::OK();
    }
    auto m = store.Head(args.src, name);
    const std::string to = args.naming.Apply(name);
    Status c = m.ok() ? store.Copy(args.src, name, args.dst, to, args.through ? args.through(to) : WriteThroughFn())
                      : m.status();
    if (c.ok()) {
      jc.Add(1, static_cast<int64_t>(m->size));
      return Status::OK();
    }
    if (c.IsNotFound() && !list) return Status::OK();  // a range names objects that need not exist
    if (args.continue_on_err) {
      jc.AddError(c.message());
      return Status::OK();
    }
    return c;
  });
  return st;
}

Status PutArchiveMember(Store& store, const std::string& bucket, const std::string& archname, ArchiveFormat format,
                        ArchivePut mode, const std::string& member, int fd, uint64_t size, ObjectMeta* meta) {
  // Read, rewrite, commit: two puts into one shard at once (the CLI sends a directory's files
  // in parallel) must not both start from the same old shard and lose a member.
  static std::array<std::mutex, 64> stripes;
  std::lock_guard serial(stripes[std::hash<std::string>{}(bucket + '/' + archname) % stripes.size()]);
  std::shared_ptr<const ObjectHandle> existing;
  if (mode != ArchivePut::kPut) {
    auto e = store.OpenShared(bucket, archname);
    if (e.ok()) {
      existing = *e;
    } else if (!e.status().IsNotFound() || mode == ArchivePut::kAppend) {
      return e.status();
    }
  }
  auto w = store.BeginPut(bucket, archname, PutOptions{});
  if (!w.ok()) return w.status();
  ObjectSink sink(w->get());
  auto aw = ArchiveWriter::Create(format, &sink);
  if (!aw.ok()) return aw.status();
  ArchiveWriter& writer = **aw;
  if (existing) AIS_RETURN_IF_ERROR(CopyArchiveMembers(existing, archname, format, writer));
  AIS_RETURN_IF_ERROR(writer.BeginEntry(member, size, NowNs() / 1000000000));
  AIS_RETURN_IF_ERROR(writer.WriteFile({FileSegment{fd, 0, size}}, nullptr));
  AIS_RETURN_IF_ERROR(writer.EndEntry());
  AIS_RETURN_IF_ERROR(writer.Finish());
  return (*w)->Commit(meta);
}

Status RunArchive(Store& store, JobControl& jc, const ArchiveArgs& args) {
  std::shared_ptr<const ObjectHandle> existing;
  if (args.append) {
    auto e = store.OpenShared(args.dst, args.archname);
    if (e.ok()) {
      existing = *e;
    } else if (!e.status().IsNotFound()) {
      return e.status();
    }
  }
  auto w = store.BeginPut(args.dst, args.archname, PutOptions{});
  if (!w.ok()) return w.status();
  ObjectSink sink(w->get());
  auto aw = ArchiveWriter::Create(args.format, &sink);
  if (!aw.ok()) return aw.status();
  ArchiveWriter& writer = **aw;
  if (existing) AIS_RETURN_IF_ERROR(CopyArchiveMembers(existing, args.archname, args.format, writer));
  bool list = args.sel.kind() == ObjectSelection::Kind::kList;
  Status st = args.sel.ForEach(store, args.src, Stopper(jc), [&](const std::string& name) {
    if (args.src == args.dst && name == args.archname) return Status::OK();  // never archive itself
    auto obj = store.OpenShared(args.src, name);
    if (!obj.ok()) {
      if (obj.status().IsNotFound() && !list) return Status::OK();
      if (args.continue_on_err) {
        jc.AddError(obj.status().message());
        return Status::OK();
      }
      return obj.status();
    }
    std::string entry = args.include_src_bucket ? args.src + "/" + name : name;
    const ObjectMeta& m = (*obj)->meta();
    AIS_RETURN_IF_ERROR(writer.BeginEntry(entry, m.size, m.atime_ns / 1000000000));
    AIS_RETURN_IF_ERROR(writer.WriteFile((*obj)->Segments(0, m.size), *obj));
    AIS_RETURN_IF_ERROR(writer.EndEntry());
    jc.Add(1, static_cast<int64_t>(m.size));
    return Status::OK();
  });
  AIS_RETURN_IF_ERROR(st);
  if (jc.aborted()) return Status::OK();  // the writer's destructor drops the unfinished object
  AIS_RETURN_IF_ERROR(writer.Finish());
  ObjectMeta meta;
  return (*w)->Commit(&meta);
}

Result<BucketSummary> SummarizeBucket(Store& store, JobControl& jc, const std::string& bucket,
                                      const std::string& prefix) {
  auto props = store.GetBucket(bucket);
  if (!props.ok()) return props.status();
  BucketSummary s;
  const Mountpaths& mps = store.mountpaths();
  std::set<unsigned long> fsids;
  for (const auto& p : mps.Attached()) {
    struct statvfs vfs{};
    if (::statvfs(p.c_str(), &vfs) == 0 && fsids.insert(vfs.f_fsid).second) {
      s.disks_size += static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    }
  }
  ObjectWalk walk{.prefix = prefix, .after = {}, .headers = true, .stop = Stopper(jc)};
  Status st = store.ForEachObject(bucket, walk, [&](const WalkedObject& obj) {
    const ObjectMeta& m = obj.meta();
    const std::string& name = obj.name();
    s.min_size = s.obj_count == 0 ? m.size : std::min(s.min_size, m.size);
    s.max_size = std::max(s.max_size, m.size);
    ++s.obj_count;
    s.size_present += m.size;
    s.size_on_disk += FileSize(mps.ObjectPath(mps.PrimaryFor(bucket, name), bucket, name));
    for (uint32_t k = 1; k <= m.chunk_sizes.size(); ++k) {
      s.size_on_disk += FileSize(mps.ChunkPath(mps.ForChunk(m.upload_id, k), bucket, m.upload_id, k));
    }
    jc.Add(1, static_cast<int64_t>(m.size));
    return Status::OK();
  });
  if (!st.ok()) return st;
  return s;
}

namespace {

// `args.src` relative to the root ("." for the root itself).
std::string BeneathRoot(const PromoteArgs& args) {
  if (args.src.size() <= args.root.size() + 1) return ".";
  return args.src.substr(args.root.size() + 1);
}

Result<UniqueFd> OpenRoot(const PromoteArgs& args) { return OpenFile(args.root, O_PATH | O_DIRECTORY); }

// An opened source: its directory (for unlinkat) and the file itself.
struct SourceFile {
  UniqueFd dir;
  std::string base;
  UniqueFd fd;
  struct stat st{};
};

Result<SourceFile> OpenSource(const PromoteArgs& args) {
  auto root = OpenRoot(args);
  if (!root.ok()) return root.status();
  const std::string rel = BeneathRoot(args);
  const auto slash = rel.rfind('/');
  SourceFile f;
  f.base = slash == std::string::npos ? rel : rel.substr(slash + 1);
  auto dir = OpenBeneath(root->get(), slash == std::string::npos ? "." : rel.substr(0, slash), O_PATH | O_DIRECTORY);
  if (!dir.ok()) return dir.status();
  f.dir = std::move(*dir);
  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer.
  auto fd = OpenBeneath(f.dir.get(), f.base, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) return fd.status();
  f.fd = std::move(*fd);
  if (::fstat(f.fd.get(), &f.st) != 0) return Status::FromErrno(errno, "stat " + args.src);
  return f;
}

}  // namespace

Result<bool> PromoteSourceIsDir(const PromoteArgs& args) {
  auto root = OpenRoot(args);
  if (!root.ok()) return root.status();
  auto fd = OpenBeneath(root->get(), BeneathRoot(args), O_PATH);
  if (!fd.ok()) {
    if (fd.status().IsNotFound()) return Status::NotFound("promote: source \"" + args.src + "\" does not exist");
    return Status::InvalidArgument("invalid promote source " + fd.status().message());
  }
  struct stat st{};
  if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "stat " + args.src);
  if (S_ISDIR(st.st_mode)) return true;
  if (S_ISREG(st.st_mode)) return false;
  return Status::InvalidArgument("promote: \"" + args.src + "\" is neither a regular file nor a directory");
}

Status PromoteFile(Store& store, const PromoteArgs& args, bool* promoted) {
  *promoted = false;
  std::string name = args.obj;
  if (name.empty() || name.ends_with('/')) name += std::filesystem::path(args.src).filename().string();
  AIS_RETURN_IF_ERROR(ValidateObjectName(name));
  if (!args.overwrite && store.Head(args.bucket, name).ok()) return Status::OK();
  auto f = OpenSource(args);
  if (!f.ok()) {
    if (f.status().code() == Status::Code::kInvalidArgument) {
      return Status::InvalidArgument("invalid promote source " + f.status().message());
    }
    return f.status();
  }
  if (!S_ISREG(f->st.st_mode)) return Status::InvalidArgument("promote: \"" + args.src + "\" is not a regular file");
  AIS_RETURN_IF_ERROR(PutFromFd(store, args.bucket, name, f->fd.get(), static_cast<uint64_t>(f->st.st_size)));
  *promoted = true;
  if (args.delete_src && ::unlinkat(f->dir.get(), f->base.c_str(), 0) != 0) {
    return Status::FromErrno(errno, "remove " + args.src);
  }
  return Status::OK();
}

Status RunPromoteDir(Store& store, JobControl& jc, const PromoteArgs& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string prefix = args.obj;
  if (!prefix.empty() && !prefix.ends_with('/')) prefix += '/';
  auto visit = [&](const fs::directory_entry& e) -> Status {
    std::error_code fec;
    // Symlinks are skipped (and the walk never descends into one); a file swapped for one after
    // this check is refused when it is opened.
    if (e.is_symlink(fec) || !e.is_regular_file(fec)) return Status::OK();
    std::string rel = fs::relative(e.path(), args.src, fec).generic_string();
    if (fec) return Status::IOError("promote: " + e.path().string() + ": " + fec.message());
    PromoteArgs one = args;
    one.src = e.path().string();
    one.obj = prefix + rel;
    bool done = false;
    AIS_RETURN_IF_ERROR(PromoteFile(store, one, &done));
    if (done) jc.Add(1, static_cast<int64_t>(e.file_size(fec)));
    return Status::OK();
  };
  if (args.recursive) {
    for (fs::recursive_directory_iterator it(args.src, ec), end; !ec && it != end; it.increment(ec)) {
      if (jc.aborted()) return Status::OK();
      AIS_RETURN_IF_ERROR(visit(*it));
    }
  } else {
    for (fs::directory_iterator it(args.src, ec), end; !ec && it != end; it.increment(ec)) {
      if (jc.aborted()) return Status::OK();
      AIS_RETURN_IF_ERROR(visit(*it));
    }
  }
  if (ec) return Status::IOError("promote: " + args.src + ": " + ec.message());
  return Status::OK();
}

}  // namespace ais
