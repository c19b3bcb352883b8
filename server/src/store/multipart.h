// MultipartUploads: the store's multipart upload engine (AIS and S3 MPU).
//
// Invariants: an upload's parts are written straight into chunk files of the upload, each to a
// temp name renamed into place by PartWriter::Commit (a part replaces an earlier one of its
// number only then). The upload's chunk marker is written at Create and guards its chunks until
// Complete commits them as a chunked object (Committer::CommitChunked, the only point where they
// become visible) or Abort drops them. An upload completed or aborted is gone (`finished`,
// under its mu). Uploads in flight live in memory only: after a restart they are gone and
// recovery drops their chunks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/bucket_registry.h"
#include "store/committer.h"
#include "store/mountpaths.h"
#include "store/object_meta.h"
#include "store/object_writer.h"
#include "util/file.h"
#include "util/status.h"

namespace ais {

struct MpuUpload;  // an in-flight upload (multipart.cc)

// An in-flight multipart upload as listed (S3 ListMultipartUploads, ListParts).
struct MpuPartInfo {
  uint32_t num = 0;
  uint64_t size = 0;
  std::string tag;  // PartWriter::Commit's
};
struct MpuInfo {
  std::string name;
  std::string id;
  int64_t created_ns = 0;
  std::vector<MpuPartInfo> parts;  // by number; only from Describe (Store::MpuDescribe)
};

// Streams one multipart-upload part into its chunk file; replaces an earlier part of that number
// only on Commit(). Destroying it uncommitted leaves nothing behind.
class PartWriter {
 public:
  ~PartWriter();
  Status Write(const void* data, size_t len);
  // `tag`: what the caller says of the part's bytes, kept with it (S3's part ETag).
  Status Commit(std::string tag = {});
  // Where the part is once committed (its chunk file, until the upload completes or aborts).
  const std::string& path() const { return final_path_; }

 private:
  friend class MultipartUploads;
  PartWriter() = default;
  std::shared_ptr<MpuUpload> upload_;
  uint32_t num_ = 0;
  uint64_t expected_ = 0;
  uint64_t written_ = 0;
  std::string temp_path_;
  std::string final_path_;
  UniqueFd fd_;
  bool done_ = false;
};

class MultipartUploads {
 public:
  MultipartUploads(Committer& commit, const BucketRegistry& buckets, const Mountpaths& mps)
      : commit_(commit), buckets_(buckets), mps_(mps) {}
  MultipartUploads(const MultipartUploads&) = delete;
  MultipartUploads& operator=(const MultipartUploads&) = delete;

  Result<std::string> Create(const std::string& bucket, const std::string& name,
                             std::vector<std::pair<std::string, std::string>> custom);
  // Opens part `num`; the caller streams `size` bytes with Write() and then Commit()s the part.
  Result<std::unique_ptr<PartWriter>> Part(const std::string& bucket, const std::string& name,
                                           const std::string& upload_id, uint32_t num, uint64_t size);
  // `extra_custom` joins the custom metadata given at Create; `through`: a remote bucket's
  // upload of the assembled object, before its commit; *out (if given) describes the committed
  // object.
  Status Complete(const std::string& bucket, const std::string& name, const std::string& upload_id,
                  std::vector<uint32_t> parts, const std::vector<std::pair<std::string, std::string>>& extra_custom,
                  ObjectMeta* out, const WriteThroughFn& through);
  // S3's completion with a subset of the parts: drops every part not in `parts` (strictly
  // ascending, each committed) and renumbers the others 1..M in their order, so that
  // Complete({1..M}) makes them the object. kInvalidArgument naming a part that is not there.
  Status KeepOnly(const std::string& bucket, const std::string& name, const std::string& upload_id,
                  const std::vector<uint32_t>& parts);
  // The upload with its committed parts; kNotFound as the other calls.
  Result<MpuInfo> Describe(const std::string& bucket, const std::string& name, const std::string& upload_id);
  // The bucket's uploads in flight (without parts), by name, then creation time.
  std::vector<MpuInfo> List(const std::string& bucket);
  Status Abort(const std::string& bucket, const std::string& name, const std::string& upload_id);

 private:
  Result<std::shared_ptr<MpuUpload>> Find(const std::string& bucket, const std::string& name,
                                          const std::string& upload_id);

  Committer& commit_;
  const BucketRegistry& buckets_;
  const Mountpaths& mps_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<MpuUpload>> uploads_;  // guarded by mu_
};

}  // namespace ais
