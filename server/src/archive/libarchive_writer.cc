#include "archive/libarchive_writer.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <string>

#include "util/file.h"

namespace ais {
namespace {

constexpr size_t kCopyPiece = 256 << 10;

struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

}  // namespace

Result<std::unique_ptr<ArchiveWriter>> LibarchiveWriter::Create(ArchiveFormat format, OutputSink* sink) {
  std::unique_ptr<LibarchiveWriter> w(new LibarchiveWriter(sink));
  w->a_ = archive_write_new();
  if (!w->a_) return Status::IOError("archive_write_new failed");
  struct archive* a = w->a_;
  if (format == ArchiveFormat::kZip) {
    AIS_RETURN_IF_ERROR(w->Check(archive_write_set_format_zip(a), "zip format"));
    AIS_RETURN_IF_ERROR(w->Check(archive_write_set_format_option(a, "zip", "compression", "store"), "zip store"));
  } else {
    AIS_RETURN_IF_ERROR(w->Check(archive_write_set_format_pax_restricted(a), "tar format"));
    if (IsGzipTar(format)) {
      AIS_RETURN_IF_ERROR(w->Check(archive_write_add_filter_gzip(a), "gzip"));
      AIS_RETURN_IF_ERROR(w->Check(archive_write_set_filter_option(a, "gzip", "compression-level", "1"), "gzip level"));
    } else if (format == ArchiveFormat::kTarLz4) {
      AIS_RETURN_IF_ERROR(w->Check(archive_write_add_filter_lz4(a), "lz4"));
      AIS_RETURN_IF_ERROR(w->Check(archive_write_set_filter_option(a, "lz4", "block-size", "5"), "lz4 block size"));
      AIS_RETURN_IF_ERROR(w->Check(archive_write_set_filter_option(a, "lz4", "stream-checksum", nullptr), "lz4 checksum"));
    } else {
      return Status::InvalidArgument("libarchive writer: plain tar is written by TarWriter");
    }
  }
  // No blocking: bytes reach the sink as libarchive produces them, and the trailer is not padded.
  AIS_RETURN_IF_ERROR(w->Check(archive_write_set_bytes_per_block(a, 0), "block size"));
  AIS_RETURN_IF_ERROR(w->Check(archive_write_open2(a, w.get(), nullptr, &LibarchiveWriter::WriteCb, nullptr, nullptr), "open"));
  return std::unique_ptr<ArchiveWriter>(std::move(w));
}

LibarchiveWriter::~LibarchiveWriter() {
  discard_ = true;
  if (a_) archive_write_free(a_);
}

ssize_t LibarchiveWriter::WriteCb(struct archive*, void* ctx, const void* buf, size_t len) {
  auto* self = static_cast<LibarchiveWriter*>(ctx);
  if (self->discard_) return static_cast<ssize_t>(len);
  Status st = self->sink_->Append(buf, len);
  if (!st.ok()) {
    self->sink_status_ = std::move(st);
    return -1;
  }
  return static_cast<ssize_t>(len);
}

Status LibarchiveWriter::Check(int rc, const char* what) {
  if (rc >= ARCHIVE_WARN) return Status::OK();
  if (!sink_status_.ok()) return sink_status_;
  const char* err = a_ ? archive_error_string(a_) : nullptr;
  return Status::IOError(std::string("archive writer: ") + what + ": " + (err ? err : "failed"));
}

Status LibarchiveWriter::BeginEntry(std::string_view name, uint64_t size, int64_t mtime_sec) {
  std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
  std::string n(name);
  archive_entry_copy_pathname(e.get(), n.c_str());
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  archive_entry_set_mtime(e.get(), mtime_sec, 0);
  size_ = size;
  written_ = 0;
  return Check(archive_write_header(a_, e.get()), "entry header");
}

Status LibarchiveWriter::Write(const void* data, size_t len) {
  if (written_ + len > size_) return Status::Corruption("archive entry got more bytes than its declared size");
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    la_ssize_t n = archive_write_data(a_, p, len);
    if (n <= 0) return Check(n < 0 ? static_cast<int>(n) : ARCHIVE_FATAL, "entry data");
    p += n;
    len -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status LibarchiveWriter::WriteFile(const std::vector<FileSegment>& segments, std::shared_ptr<const void>) {
  std::vector<char> buf(kCopyPiece);
  return StreamSegments(segments, buf, [this](const char* p, size_t n) { return Write(p, n); });
}

Status LibarchiveWriter::EndEntry() {
  if (written_ != size_) return Status::Corruption("archive entry is shorter than its declared size");
  return Check(archive_write_finish_entry(a_), "finish entry");
}

Status LibarchiveWriter::Finish() { return Check(archive_write_close(a_), "close"); }

}  // namespace ais
