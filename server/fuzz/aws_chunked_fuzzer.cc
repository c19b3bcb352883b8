// The input is an aws-chunked request body (s3/aws_chunked.h) after one byte that sets where
// the body is split into the pieces the decoder is fed.
//
// Properties: the outcome (error or not, decoded bytes, trailers) does not depend on how the
// body is split (fed whole, byte by byte, or in pieces of the chosen size); decoded() counts the
// bytes the sink got; a refusal is kInvalidArgument; an accepted body re-encoded in chunks of
// one size, with its trailers, decodes to the same bytes and trailers. With chunk signatures
// checked (a fixed SigV4 context), a refusal is kInvalidArgument or kForbidden, and what is
// accepted decodes as without the checks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "s3/aws_chunked.h"

namespace {

struct Outcome {
  bool ok = false;
  std::string data;
  std::vector<std::pair<std::string, std::string>> trailers;
};

Outcome Decode(const std::string& body, size_t piece, bool signed_chunks = false) {
  Outcome out;
  ais::s3::AwsChunkedDecoder d([&](const char* p, size_t n) {
    out.data.append(p, n);
    return ais::Status::OK();
  });
  ais::s3::ChunkSignatures sigs(ais::s3::SigV4Context{.access_key = "AK",
                                                       .signature = std::string(64, '0'),
                                                       .amz_date = "20260101T000000Z",
                                                       .scope = "20260101/us-east-1/s3/aws4_request",
                                                       .signing_key = std::string(32, 'k')});
  if (signed_chunks) d.VerifyChunks(&sigs, piece % 2 == 0);
  ais::Status st;
  for (size_t i = 0; i < body.size() && st.ok(); i += piece) st = d.Feed(body.data() + i, std::min(piece, body.size() - i));
  if (st.ok()) st = d.Finish();
  FUZZ_CHECK(st.ok() || st.code() == ais::Status::Code::kInvalidArgument ||
             (signed_chunks && st.code() == ais::Status::Code::kForbidden));
  FUZZ_CHECK(d.decoded() == out.data.size());
  out.ok = st.ok();
  out.trailers = d.trailers();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  Outcome whole = Decode(body, body.size() + 1);
  Outcome checked = Decode(body, piece, /*signed_chunks=*/true);
  FUZZ_CHECK(!checked.ok || (whole.ok && checked.data == whole.data));
  for (size_t p : {size_t{1}, piece}) {
    Outcome split = Decode(body, p);
    FUZZ_CHECK(split.ok == whole.ok);
    if (whole.ok) {
      FUZZ_CHECK(split.data == whole.data);
      FUZZ_CHECK(split.trailers == whole.trailers);
    }
  }
  if (!whole.ok) return 0;
  char hex[32];
  std::string again;
  for (size_t i = 0; i < whole.data.size(); i += piece) {
    size_t n = std::min(piece, whole.data.size() - i);
    std::snprintf(hex, sizeof(hex), "%zx;chunk-signature=0\r\n", n);
    again += hex + whole.data.substr(i, n) + "\r\n";
  }
  again += "0\r\n";
  for (const auto& [k, v] : whole.trailers) again += k + ":" + v + "\r\n";
  again += "\r\n";
  Outcome round = Decode(again, piece);
  FUZZ_CHECK(round.ok && round.data == whole.data);
  // A trailer value is trimmed on the way in: written back trimmed, it reads back the same.
  FUZZ_CHECK(round.trailers == whole.trailers);
  return 0;
}
