// The read step of an object GET, shared by the AIS API (objects.cc) and the S3 front end
// (s3/): open the object, check a caller's condition on its metadata, resolve the Range and
// slice the object's files, so that both reply through Exchange::ReplyFile (sendfile).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/context.h"

namespace ais {

struct ObjectRead {
  ObjectHandle handle;
  uint64_t start = 0;
  uint64_t length = 0;  // bytes to send
  bool ranged = false;  // a Range header was given (206)
  std::vector<FileSegment> segments;
};

// Opens bucket/name for a GET of `range` (the Range header; empty: the whole object), reopening
// when the object is overwritten under the read (Store::OpenReading). `precheck`, if given, runs
// on the object's metadata before the range is resolved (S3's conditional headers); its error
// is returned as is. An unsatisfiable or malformed range is kRangeNotSatisfiable with
// *unsatisfiable_size set to the object's size (the reply's `Content-Range: bytes */<size>`).
// A whole-object read verifies the content checksum when the bucket asks (validate_warm_get).
Result<ObjectRead> OpenObjectRead(ServerContext& ctx, const std::string& bucket, const std::string& name,
                                  std::string_view range,
                                  const std::function<Status(const ObjectMeta&)>* precheck = nullptr,
                                  std::optional<uint64_t>* unsatisfiable_size = nullptr);

}  // namespace ais
