#include "archive/shard.h"

#include <algorithm>
#include <string>

#include "archive/libarchive_shard.h"
#include "archive/tar_shard.h"

namespace ais {

Result<std::shared_ptr<Shard>> Shard::Open(std::shared_ptr<const ObjectHandle> obj, std::string_view objname,
                                           std::optional<ArchiveFormat> hint) {
  std::optional<ArchiveFormat> format = hint ? hint : FormatFromName(objname);
  if (!format) {
    std::string head(static_cast<size_t>(std::min<uint64_t>(obj->size(), 512)), '\0');
    AIS_RETURN_IF_ERROR(obj->ReadAt(0, head.data(), head.size()));
    format = FormatFromMagic(head);
  }
  if (!format) {
    return Status::InvalidArgument("\"" + std::string(objname) +
                                   "\" is not an archive: unknown format (expecting .tar, .tgz, .tar.gz, .tar.lz4 or .zip)");
  }
  if (*format == ArchiveFormat::kTar) return std::shared_ptr<Shard>(std::make_shared<TarShard>(std::move(obj)));
  return std::shared_ptr<Shard>(std::make_shared<LibarchiveShard>(std::move(obj), *format));
}

}  // namespace ais
