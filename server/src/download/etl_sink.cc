#include "download/etl_sink.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "archive/file_spool.h"
#include "etl/transform.h"
#include "store/bck.h"

namespace ais {
namespace {

class Sink : public FetchSink {
 public:
  Sink(Store& store, std::string bucket, std::string name, std::string spool_dir,
       std::shared_ptr<etl::RunningEtl> etl, std::string etl_args, WriteThroughFn through)
      : store_(store),
        bucket_(std::move(bucket)),
        name_(std::move(name)),
        spool_dir_(std::move(spool_dir)),
        etl_(std::move(etl)),
        etl_args_(std::move(etl_args)),
        through_(std::move(through)) {}

  Status Open(FetchedReply reply) override {
    auto spool = FileSpool::Create(spool_dir_);
    if (!spool.ok()) return spool.status();
    spool_ = std::move(*spool);
    custom_ = std::move(reply.custom);
    return Status::OK();
  }

  Status Write(const char* data, size_t len) override { return spool_->Append(data, len); }

  Result<ObjectMeta> Commit() override {
    AIS_RETURN_IF_ERROR(spool_->Flush());
    PutOptions po;
    po.custom = std::move(custom_);
    auto w = store_.BeginPut(bucket_, name_, std::move(po));
    if (!w.ok()) return w.status();
    uint64_t offset = 0;
    const int fd = spool_->fd();
    etl::TransformSource src{.provider = std::string(KeyProvider(bucket_)),
                             .bucket = std::string(KeyName(bucket_)),
                             .ns = KeyNs(bucket_).Uname(),
                             .object = name_,
                             .size = spool_->size(),
                             .read = [fd, &offset](char* buf, size_t len) -> Result<size_t> {
                               ssize_t n;
                               do {
                                 n = pread(fd, buf, len, static_cast<off_t>(offset));
                               } while (n < 0 && errno == EINTR);
                               if (n < 0) return Status::IOError(std::string("reading the download's spool: ") + std::strerror(errno));
                               offset += static_cast<uint64_t>(n);
                               return static_cast<size_t>(n);
                             }};
    auto status = etl::Transform(
        *etl_, src, etl_args_, {}, [](int, std::optional<uint64_t>) { return Status::OK(); },
        [&w](const char* d, size_t n) { return (*w)->Write(d, n); });
    if (!status.ok()) return status.status();
    if (*status == 204) {  // nothing to write: without Ais-Node-Url no transformer delivers itself
      return Status::IOError("ETL " + etl_->spec.name + " answered 204 (delivered) for a download: nothing to store");
    }
    ObjectMeta meta;
    AIS_RETURN_IF_ERROR(CommitThrough(**w, &meta, through_));
    return meta;
  }

 private:
  Store& store_;
  const std::string bucket_, name_, spool_dir_;
  const std::shared_ptr<etl::RunningEtl> etl_;
  const std::string etl_args_;
  const WriteThroughFn through_;
  std::unique_ptr<FileSpool> spool_;
  std::vector<std::pair<std::string, std::string>> custom_;
};

}  // namespace

std::unique_ptr<FetchSink> EtlSink(Store& store, std::string bucket, std::string name, std::string spool_dir,
                                   std::shared_ptr<etl::RunningEtl> etl, std::string etl_args,
                                   WriteThroughFn through) {
  return std::make_unique<Sink>(store, std::move(bucket), std::move(name), std::move(spool_dir), std::move(etl),
                                std::move(etl_args), std::move(through));
}

}  // namespace ais
