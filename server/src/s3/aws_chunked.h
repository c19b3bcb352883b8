// AwsChunkedDecoder: the `aws-chunked` content coding S3 clients use for streaming uploads
// (x-amz-content-sha256: STREAMING-...), decoded as the bytes arrive, in bounded memory.
//
//   body    = *chunk last-chunk trailer CRLF
//   chunk   = hex-size [";" extension] CRLF data CRLF     (extension: chunk-signature=...)
//   last    = "0" [";" extension] CRLF
//   trailer = *(name ":" value CRLF)                       (e.g. x-amz-checksum-crc32:<base64>)
//
// Chunk signatures are checked when VerifyChunks is given the request's SigV4 context (the
// server has S3 access keys); otherwise they are skipped. A body that ends before the last
// chunk, or has a malformed frame, is an error naming what was wrong; nothing past the final
// CRLF is accepted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "s3/checksums.h"
#include "s3/sigv4.h"
#include "util/status.h"

namespace ais::s3 {

class AwsChunkedDecoder {
 public:
  using Sink = std::function<Status(const char*, size_t)>;
  // Limits: one size line with its extension, and all trailers together.
  static constexpr size_t kMaxLine = 4096;
  static constexpr size_t kMaxTrailers = 16384;
  static constexpr uint64_t kMaxChunk = 5ULL << 30;  // S3's largest part

  explicit AwsChunkedDecoder(Sink sink) : sink_(std::move(sink)) {}

  // Checks every chunk's signature against `sigs` (and, with `trailer_signed`, the trailer
  // signature); a mismatch is kForbidden. Call before the first Feed.
  void VerifyChunks(ChunkSignatures* sigs, bool trailer_signed) {
    sigs_ = sigs;
    trailer_signed_ = trailer_signed;
  }

  // Decodes the next `n` body bytes, passing the data to the sink. Stops at the first error.
  Status Feed(const char* p, size_t n);
  // The body ended: OK only if it ended after the last chunk (and its trailers).
  Status Finish();

  uint64_t decoded() const { return decoded_; }
  // Trailer headers, names lower-cased, in order.
  const std::vector<std::pair<std::string, std::string>>& trailers() const { return trailers_; }
  // The value of trailer `name` (lower case), or null.
  const std::string* trailer(std::string_view name) const;

 private:
  enum class State { kSize, kExt, kSizeLf, kData, kDataCr, kDataLf, kTrailer, kTrailerLf, kDone };
  Status Fail(const std::string& what) const { return Status::InvalidArgument("aws-chunked: " + what); }
  Status EndTrailerLine();
  Status EndChunk();      // a chunk's data (or the last, empty chunk) is complete
  Status EndTrailers();   // the body is complete

  Sink sink_;
  State state_ = State::kSize;
  uint64_t size_ = 0;      // current chunk's size
  int digits_ = 0;         // hex digits of the size so far
  size_t line_len_ = 0;    // bytes of the current size line
  uint64_t left_ = 0;      // data bytes left in the current chunk
  uint64_t decoded_ = 0;
  bool last_ = false;      // the size line just read was the zero-size chunk
  std::string line_;       // the current trailer line
  size_t trailer_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> trailers_;
  ChunkSignatures* sigs_ = nullptr;  // set: chunk signatures are checked
  bool trailer_signed_ = false;
  std::string ext_;                      // the current chunk's extension (when checking)
  std::unique_ptr<BodyHasher> chunk_sha_;  // the current chunk's data (when checking)
  bool trailers_checked_ = false;
};

}  // namespace ais::s3
