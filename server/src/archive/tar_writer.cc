#include "archive/tar_writer.h"

#include <cstring>
#include <string>

#include "archive/tar_header.h"

namespace ais {
namespace {

constexpr char kZeros[kTarTrailer] = {};

Status Overflow() { return Status::Corruption("archive entry got more bytes than its declared size"); }

}  // namespace

Status TarWriter::BeginEntry(std::string_view name, uint64_t size, int64_t mtime_sec) {
  size_ = size;
  written_ = 0;
  std::string hdr = EncodeTarHeader(name, size, mtime_sec);
  return sink_->Append(hdr.data(), hdr.size());
}

Status TarWriter::Write(const void* data, size_t len) {
  if (written_ + len > size_) return Overflow();
  written_ += len;
  return sink_->Append(data, len);
}

Status TarWriter::WriteFile(const std::vector<FileSegment>& segments, std::shared_ptr<const void> owner) {
  for (const auto& s : segments) {
    if (written_ + s.len > size_) return Overflow();
    written_ += s.len;
    AIS_RETURN_IF_ERROR(sink_->AppendFile(s, owner));
  }
  return Status::OK();
}

Status TarWriter::EndEntry() {
  if (written_ != size_) return Status::Corruption("archive entry is shorter than its declared size");
  return sink_->Append(kZeros, TarPadding(size_));
}

Status TarWriter::WriteEntry(std::string_view name, std::string_view data, int64_t mtime_sec) {
  size_ = written_ = data.size();
  std::string hdr = EncodeTarHeader(name, data.size(), mtime_sec);
  const std::string_view parts[] = {hdr, data, std::string_view(kZeros, TarPadding(data.size()))};
  return sink_->AppendParts(parts, 3);
}

Status TarWriter::WriteEntryInPlace(std::string_view name, ByteBuffer buf, uint64_t size, int64_t mtime_sec) {
  static_assert(kInPlaceHead == kTarBlock);
  if (buf.size() != InPlaceSize(size) || !EncodeUstarHeader(name, size, mtime_sec, buf.data())) {
    return WriteEntry(name, std::string_view(buf.data() + kInPlaceHead, size), mtime_sec);
  }
  size_ = written_ = size;
  std::memset(buf.data() + kTarBlock + size, 0, TarPadding(size));
  return sink_->AppendOwned(std::move(buf));
}

Status TarWriter::Finish() { return sink_->Append(kZeros, kTarTrailer); }

}  // namespace ais
