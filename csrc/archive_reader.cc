#include "archive_reader.h"

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <cstring>

#include "byte_source.h"

namespace aisnative {
namespace {

constexpr int64_t kTarBlock = 512;

// libarchive's words for "the input ended": tar, zip, gzip, lz4 and zstd say it one of these
// ways, or say nothing (the zip reader finding no next header). The tar reader calls a stream
// that ends after a pax or long-name header "Damaged" - fatally, where a bad header checksum is
// only a retry.
bool SaysTruncated(int rc, const char* msg) {
  if (msg == nullptr || *msg == '\0') return true;
  if (rc == ARCHIVE_FATAL && std::strstr(msg, "Damaged tar archive") != nullptr) return true;
  if (std::strstr(msg, "decompression failed (-5)") != nullptr) return true;  // zlib: no input
  for (const char* word : {"runcated", "remature", "nexpected EOF", "nexpected end", "end of file",
                           "end-of-archive"}) {
    if (std::strstr(msg, word) != nullptr) return true;
  }
  return false;
}

}  // namespace

ArchiveReader::ArchiveReader(ByteSource* source) : source_(source), a_(archive_read_new()) {
  if (a_ == nullptr) return;  // NextEntry reports it
  archive_read_support_format_tar(a_);  // v7, ustar, pax, GNU
  archive_read_support_format_zip_streamable(a_);
  archive_read_support_filter_gzip(a_);
  archive_read_support_filter_lz4(a_);
  archive_read_support_filter_zstd(a_);
}

ArchiveReader::~ArchiveReader() { Finish(ArchiveCode::kEnd); }

void ArchiveReader::Finish(ArchiveCode code) {
  if (a_ != nullptr) archive_read_free(a_);
  a_ = nullptr;
  final_ = code;
}

ssize_t ArchiveReader::ReadCallback(struct archive* a, void* self, const void** block) {
  ssize_t n = static_cast<ArchiveReader*>(self)->Pull(block);
  if (n < 0) archive_set_error(a, EIO, "the source failed");
  return n;
}

ssize_t ArchiveReader::Pull(const void** block) {
  ssize_t n = source_->Next(block);
  if (n < 0) {
    source_failed_ = true;
  } else if (n == 0) {
    source_ended_ = true;
  } else {
    source_bytes_ += n;
  }
  return n;
}

ArchiveCode ArchiveReader::Fail(int rc) {
  const char* msg = a_ != nullptr ? archive_error_string(a_) : nullptr;
  ArchiveCode code = ArchiveCode::kFormat;
  if (source_failed_) {
    code = ArchiveCode::kSource;
  } else if (source_ended_ && headers_ == 0 && source_bytes_ < kTarBlock) {
    // Too short to hold any header whole: whatever it was meant to be, it was cut.
    code = ArchiveCode::kTruncated;
    msg = source_bytes_ == 0 ? "the stream is empty" : "the stream ends inside the first header";
  } else if (source_ended_ && SaysTruncated(rc, msg)) {
    code = ArchiveCode::kTruncated;
  }
  message_ = msg != nullptr && *msg != '\0' ? msg : "the archive ends early";
  Finish(code);
  return code;
}

ArchiveCode ArchiveReader::NextEntry(EntryInfo* entry) {
  if (a_ == nullptr) {
    if (final_ == ArchiveCode::kOk) {  // archive_read_new failed
      message_ = "out of memory";
      final_ = ArchiveCode::kFormat;
    }
    return final_;
  }
  if (!opened_) {
    opened_ = true;
    int rc = archive_read_open(a_, this, nullptr, &ReadCallback, nullptr);
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return Fail(rc);
  } else {
    int rc = archive_read_data_skip(a_);
    if (rc < ARCHIVE_OK) return Fail(rc);
  }
  int64_t header_pos = archive_filter_bytes(a_, 0);
  struct archive_entry* e = nullptr;
  int rc = archive_read_next_header(a_, &e);
  if (rc == ARCHIVE_EOF) {
    // libarchive ends a tar without an error where the next header would start, lenient to
    // writers that omit the end-of-archive blocks; a stream cut between two members looks the
    // same. The end marker is a zero block consumed. (A stream that ends after a pax or GNU
    // long-name header is a fatal "Damaged tar archive", see SaysTruncated.)
    bool tar = (archive_format(a_) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR;
    if (tar && archive_filter_bytes(a_, 0) - header_pos < kTarBlock) {
      message_ = "the archive ends without its end-of-archive blocks";
      Finish(ArchiveCode::kTruncated);
      return final_;
    }
    Finish(ArchiveCode::kEnd);
    return final_;
  }
  // A warning leaves the entry readable (a name the locale cannot spell, for one); a retry is
  // a damaged header.
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return Fail(rc);
  if (headers_++ == 0) compressed_ = archive_filter_code(a_, 0) != ARCHIVE_FILTER_NONE;
  const char* name = archive_entry_pathname(e);
  if (name == nullptr) name = archive_entry_pathname_utf8(e);
  if (name == nullptr) name = "";
  entry->name = name;
  entry->name_len = std::strlen(name);
  entry->size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
  entry->type = archive_entry_filetype(e);
  entry->hardlink = archive_entry_hardlink(e) != nullptr;
  return ArchiveCode::kOk;
}

ArchiveCode ArchiveReader::ReadData(void* dst, size_t n, size_t* got) {
  if (a_ == nullptr) return final_;
  la_ssize_t r = archive_read_data(a_, dst, n);
  if (r < 0) return Fail(static_cast<int>(r));
  *got = static_cast<size_t>(r);
  return ArchiveCode::kOk;
}

}  // namespace aisnative
