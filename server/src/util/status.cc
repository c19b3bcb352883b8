#include "util/status.h"

#include <cerrno>
#include <cstring>

namespace ais {

Status Status::FromErrno(int err, const std::string& context) {
  std::string msg = context + ": " + std::strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return NoSpace(std::move(msg));
    case ENOENT:
    case ENOTDIR:
      return NotFound(std::move(msg));
    default:
      return IOError(std::move(msg));
  }
}

}  // namespace ais
