#include "archive/archive_writer.h"

#include "archive/libarchive_writer.h"
#include "archive/tar_writer.h"

namespace ais {

Result<std::unique_ptr<ArchiveWriter>> ArchiveWriter::Create(ArchiveFormat format, OutputSink* sink) {
  if (format == ArchiveFormat::kTar) return std::unique_ptr<ArchiveWriter>(std::make_unique<TarWriter>(sink));
  return LibarchiveWriter::Create(format, sink);
}

}  // namespace ais
