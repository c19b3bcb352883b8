#include "s3/aws_chunked.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace ais::s3 {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string ByteText(char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

const std::string* AwsChunkedDecoder::trailer(std::string_view name) const {
  for (const auto& [k, v] : trailers_) {
    if (k == name) return &v;
  }
  return nullptr;
}

Status AwsChunkedDecoder::EndChunk() {
  if (sigs_ == nullptr) return Status::OK();
  Status st = sigs_->Check(ext_, chunk_sha_->Finish());
  chunk_sha_.reset();
  ext_.clear();
  return st;
}

Status AwsChunkedDecoder::EndTrailers() {
  if (sigs_ == nullptr || !trailer_signed_ || trailers_checked_) return Status::OK();
  trailers_checked_ = true;
  std::vector<std::pair<std::string, std::string>> signed_part;
  const std::string* given = nullptr;
  for (const auto& t : trailers_) {
    if (t.first == "x-amz-trailer-signature") {
      given = &t.second;
    } else {
      signed_part.push_back(t);
    }
  }
  if (given == nullptr) return Status::Forbidden("aws-chunked: the trailers have no x-amz-trailer-signature");
  return sigs_->CheckTrailer(signed_part, *given);
}

Status AwsChunkedDecoder::EndTrailerLine() {
  if (line_.empty()) {  // the empty line that ends the body
    state_ = State::kDone;
    return EndTrailers();
  }
  auto colon = line_.find(':');
  if (colon == std::string::npos || colon == 0) return Fail("malformed trailer \"" + line_.substr(0, 64) + "\"");
  std::string name = line_.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string value = line_.substr(colon + 1);
  auto not_space = [](char c) { return c != ' ' && c != '\t'; };
  value.erase(value.begin(), std::find_if(value.begin(), value.end(), not_space));
  value.erase(std::find_if(value.rbegin(), value.rend(), not_space).base(), value.end());
  trailers_.emplace_back(std::move(name), std::move(value));
  line_.clear();
  state_ = State::kTrailer;
  return Status::OK();
}

Status AwsChunkedDecoder::Feed(const char* p, size_t n) {
  const char* end = p + n;
  while (p < end) {
    switch (state_) {
      case State::kSize: {
        char c = *p++;
        if (++line_len_ > kMaxLine) return Fail("chunk size line too long");
        if (c == ';') {
          if (digits_ == 0) return Fail("missing chunk size");
          state_ = State::kExt;
        } else if (c == '\r') {
          if (digits_ == 0) return Fail("missing chunk size");
          state_ = State::kSizeLf;
        } else {
          int v = HexValue(c);
          if (v < 0) return Fail("bad hex digit " + ByteText(c) + " in chunk size");
          if (++digits_ > 16 || size_ > (kMaxChunk >> 4)) return Fail("chunk size exceeds " + std::to_string(kMaxChunk));
          size_ = size_ << 4 | static_cast<uint64_t>(v);
          if (size_ > kMaxChunk) return Fail("chunk size exceeds " + std::to_string(kMaxChunk));
        }
        break;
      }
      case State::kExt: {
        // chunk-signature=...: up to the CR (bounded by kMaxLine with the size); kept only
        // when signatures are checked.
        const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p)));
        size_t skip = cr ? static_cast<size_t>(cr - p) : static_cast<size_t>(end - p);
        line_len_ += skip;
        if (line_len_ > kMaxLine) return Fail("chunk extension too long");
        if (sigs_ != nullptr) ext_.append(p, skip);
        p += skip;
        if (cr) {
          ++p;
          state_ = State::kSizeLf;
        }
        break;
      }
      case State::kSizeLf: {
        if (*p++ != '\n') return Fail("CRLF expected after the chunk size");
        line_len_ = 0;
        digits_ = 0;
        left_ = size_;
        last_ = size_ == 0;
        size_ = 0;
        state_ = last_ ? State::kTrailer : State::kData;
        if (sigs_ != nullptr) chunk_sha_ = BodyHasher::Create(ChecksumAlgo::kSha256);
        if (last_) AIS_RETURN_IF_ERROR(EndChunk());  // the empty chunk: its data hash is of ""
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(left_, static_cast<uint64_t>(end - p)));
        if (chunk_sha_) chunk_sha_->Update(p, take);
        AIS_RETURN_IF_ERROR(sink_(p, take));
        p += take;
        left_ -= take;
        decoded_ += take;
        if (left_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (*p++ != '\r') return Fail("CRLF expected after the chunk data");
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (*p++ != '\n') return Fail("CRLF expected after the chunk data");
        state_ = State::kSize;
        AIS_RETURN_IF_ERROR(EndChunk());
        break;
      case State::kTrailer: {
        char c = *p++;
        if (++trailer_bytes_ > kMaxTrailers) return Fail("trailers exceed " + std::to_string(kMaxTrailers) + " bytes");
        if (c == '\r') {
          state_ = State::kTrailerLf;
        } else {
          line_.push_back(c);
        }
        break;
      }
      case State::kTrailerLf:
        if (++trailer_bytes_ > kMaxTrailers) return Fail("trailers exceed " + std::to_string(kMaxTrailers) + " bytes");
        if (*p++ != '\n') return Fail("CRLF expected after a trailer");
        AIS_RETURN_IF_ERROR(EndTrailerLine());
        break;
      case State::kDone:
        return Fail("data after the end of the body");
    }
  }
  return Status::OK();
}

Status AwsChunkedDecoder::Finish() {
  // Some clients end the body right after the last trailer line (or after the zero-size chunk)
  // without the final empty line: accepted, since nothing is missing from the data.
  if (state_ == State::kDone || (state_ == State::kTrailer && line_.empty())) return EndTrailers();
  return Fail("unexpected end of body (" + std::to_string(decoded_) + " bytes decoded)");
}

}  // namespace ais::s3
