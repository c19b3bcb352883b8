// ArchiveReader: the entries of a tar or zip stream, in order, read once through libarchive.
//
// Formats: tar (v7, ustar, pax, GNU long names), zip read from its local headers (streaming:
// stored and deflated members, data descriptors), each optionally inside gzip, lz4 or zstd -
// what the server writes (server/src/archive/) and what shards hold. Nothing is seekable: memory
// is the source's block plus libarchive's read-ahead and decompression state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct archive;

namespace aisnative {

class ByteSource;

// How a step ended. kTruncated: the stream ended inside a header or a member, or (tar) before
// its end-of-archive blocks. kFormat: not a supported archive, or a damaged one. kSource: the
// ByteSource failed; it holds the reason.
enum class ArchiveCode { kOk, kEnd, kTruncated, kFormat, kSource };

// One entry's header. `name` points into the reader and is valid until the next NextEntry.
struct EntryInfo {
  const char* name = nullptr;  // as stored (tar: raw bytes; pax and zip: UTF-8)
  size_t name_len = 0;
  int64_t size = -1;     // -1: known only once the data is read (zip deflate + descriptor)
  unsigned type = 0;     // S_IFMT bits: S_IFREG, S_IFDIR, S_IFLNK...
  bool hardlink = false; // a link to an earlier member; its data is that member's
};

class ArchiveReader {
 public:
  // REQUIRES: `source` outlives the reader.
  explicit ArchiveReader(ByteSource* source);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  // Moves to the next entry, skipping what is left of the current one's data. kOk fills
  // *entry; kEnd after the last entry (and on every call after that).
  ArchiveCode NextEntry(EntryInfo* entry);

  // Up to `n` bytes of the current entry's data into `dst`; *got = 0 at its end, where zip
  // CRCs and sizes are checked (a member is whole only once that call returned kOk).
  ArchiveCode ReadData(void* dst, size_t n, size_t* got);

  // True once the first entry was read from a compressed stream: every step may decompress.
  bool compressed() const { return compressed_; }

  // Why the last failed step failed (libarchive's words, or ours).
  const std::string& message() const { return message_; }

 private:
  static ssize_t ReadCallback(struct archive* a, void* self, const void** block);
  ssize_t Pull(const void** block);
  // Records why a step failed, frees libarchive's state and returns the code of the failure.
  ArchiveCode Fail(int rc);
  void Finish(ArchiveCode code);

  ByteSource* const source_;
  struct archive* a_;  // owned; nullptr once the stream has ended or failed
  ArchiveCode final_ = ArchiveCode::kOk;  // what every step returns once a_ is gone
  bool opened_ = false;
  int64_t headers_ = 0;  // entries whose header was read
  bool compressed_ = false;
  bool source_ended_ = false;
  bool source_failed_ = false;
  int64_t source_bytes_ = 0;  // raw bytes the source gave
  std::string message_;
};

}  // namespace aisnative
