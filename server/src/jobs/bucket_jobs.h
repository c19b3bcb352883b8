// The work of bucket-level and multi-object jobs (AIS xactions): copy and rename a bucket,
// delete/copy/archive/visit a selection of objects, summarize a bucket, promote local files.
// Each function runs on its job's thread, checks JobControl::aborted() between objects and
// counts what it did; none knows HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "archive/archive_format.h"
#include "jobs/job_registry.h"
#include "jobs/object_selection.h"
#include "store/store.h"
#include "util/status.h"

namespace ais {

// A copy into a remote bucket: the write-through of one destination object (store/object_writer.h), or an
// empty function for an ais:// destination.
using ThroughFor = std::function<WriteThroughFn(const std::string& dst_name)>;

// How copied objects are named: prepend, then swap the extension (AIS TCBMsg "prepend", "ext").
struct CopyNaming {
  std::string prepend;
  std::map<std::string, std::string> ext;  // "jpg" -> "txt"
  std::string Apply(const std::string& name) const;
};

struct CopyBucketArgs {
  std::string src;
  std::string dst;
  std::string prefix;
  CopyNaming naming;
  bool dry_run = false;  // visit and count, write nothing
  ThroughFor through{};  // set when dst is a remote bucket
};
// Copies every object under args.prefix. REQUIRES: dst exists unless dry_run.
Status RunCopyBucket(Store& store, JobControl& jc, const CopyBucketArgs& args);

// Rename: copies src into dst (which the caller created with src's props), then destroys src.
// Aborted or failed: dst is destroyed again and src stays as it was.
Status RunMoveBucket(Store& store, JobControl& jc, const std::string& src, const std::string& dst);

// Deletes the selection. Names a list gives that do not exist are errors (reported at the end,
// after the rest is deleted); a range skips them.
Status RunDeleteObjects(Store& store, JobControl& jc, const std::string& bucket, const ObjectSelection& sel);

// Prefetch/evict on an ais:// bucket: everything is in the cluster already, so these only
// count the selected objects that exist.
Status RunVisitObjects(Store& store, JobControl& jc, const std::string& bucket, const ObjectSelection& sel);

struct CopyObjectsArgs {
  std::string src;
  std::string dst;
  ObjectSelection sel;
  CopyNaming naming;
  bool dry_run = false;
  bool continue_on_err = false;
  ThroughFor through{};  // set when dst is a remote bucket
};
Status RunCopyObjects(Store& store, JobControl& jc, const CopyObjectsArgs& args);

struct ArchiveArgs {
  std::string src;
  std::string dst;
  std::string archname;
  ArchiveFormat format = ArchiveFormat::kTar;
  ObjectSelection sel;
  bool include_src_bucket = false;  // entries named "<src bucket>/<object>"
  bool append = false;              // keep the existing archive's entries first
  bool continue_on_err = false;
};
// Writes one archive object (atomically: it appears only when complete).
Status RunArchive(Store& store, JobControl& jc, const ArchiveArgs& args);

// One file into a shard (PUT ?archpath=, `ais archive put`): `size` bytes of `fd` from offset 0
// become member `member` of archive `archname`. kPut makes a new shard of that one file; kAppend
// keeps the existing shard's members first (kNotFound without one); kAppendOrPut appends when the
// shard exists, else makes it. The shard is replaced whole, atomically; puts into one shard run
// one at a time. Blocks on disk I/O.
enum class ArchivePut { kPut, kAppend, kAppendOrPut };
Status PutArchiveMember(Store& store, const std::string& bucket, const std::string& archname, ArchiveFormat format,
                        ArchivePut mode, const std::string& member, int fd, uint64_t size, ObjectMeta* meta);

// AIS bucket summary (apc.BsummResult) of one bucket.
struct BucketSummary {
  uint64_t obj_count = 0;
  uint64_t size_present = 0;  // sum of object sizes
  uint64_t size_on_disk = 0;  // bytes the bucket's files take (headers and chunk files included)
  uint64_t min_size = 0;
  uint64_t max_size = 0;
  uint64_t disks_size = 0;    // capacity of the filesystems under the mountpaths
};
Result<BucketSummary> SummarizeBucket(Store& store, JobControl& jc, const std::string& bucket,
                                      const std::string& prefix);

// Promote reads files beneath the operator's promote root only: every file and directory is
// opened beneath it with no symlink on the way (OpenBeneath), so neither a symlink in the tree
// nor one swapped in while a job runs leads outside; FIFOs and devices are opened without
// blocking and refused. The calls block on file I/O: run them off I/O threads.
struct PromoteArgs {
  std::string root;  // absolute: the promote root
  std::string src;   // absolute, root or beneath it; a file or a directory
  std::string bucket;
  std::string obj;  // object name (file) or prefix (directory)
  bool recursive = false;
  bool overwrite = false;
  bool delete_src = false;
};
// Whether `args.src` is a directory (else a regular file); kNotFound, or kInvalidArgument for
// anything else (a symlink, a FIFO, a device).
Result<bool> PromoteSourceIsDir(const PromoteArgs& args);
// Promotes one regular file synchronously (object name: obj, or obj + basename when obj is ""
// or ends in '/').
Status PromoteFile(Store& store, const PromoteArgs& args, bool* promoted);
// Promotes the files of a directory (its subdirectories too if recursive): object name =
// obj + "/" + relative path (no "/" when obj is "" or ends in '/').
Status RunPromoteDir(Store& store, JobControl& jc, const PromoteArgs& args);

}  // namespace ais
