#include "remote/backend.h"

namespace ais {
namespace {

Status NoMultipart(const RemoteBackend& b) {
  return Status::NotSupported("cannot multipart upload " + std::string(b.provider()) + " - operation not supported");
}

}  // namespace

Result<std::string> RemoteBackend::CreateMultipartUpload(const std::string&, const std::string&, const KeyValues&) {
  return NoMultipart(*this);
}

Result<std::string> RemoteBackend::UploadPart(const std::string&, const std::string&, const std::string&, uint32_t,
                                              uint64_t, const ReadBody&, const std::function<Status()>&) {
  return NoMultipart(*this);
}

Result<RemoteObjectAttrs> RemoteBackend::CompleteMultipartUpload(const std::string&, const std::string&,
                                                                 const std::string&, const std::vector<std::string>&) {
  return NoMultipart(*this);
}

Status RemoteBackend::AbortMultipartUpload(const std::string&, const std::string&, const std::string&) {
  return NoMultipart(*this);
}

}  // namespace ais
