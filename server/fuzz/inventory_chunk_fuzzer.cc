// The input is one inventory chunk ("AISINV01" | count | xxh64 | entries), decoded by
// DecodeInventoryChunk (inventory/inventory_format.h). Damaged chunks fail the hash check, so
// the target also re-seals the input: it rewrites the stored hash to match the payload before a
// second decode, letting the fuzzer reach the entry parser.
//
// Property: a decoded chunk, encoded again by InventoryChunkEncoder, gives the very same bytes.
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "inventory/inventory_format.h"

namespace {

constexpr size_t kChunkHeader = 8 + 4 + 8;

void Check(const std::string& raw) {
  auto chunk = ais::DecodeInventoryChunk(raw);
  if (!chunk.ok()) {
    FUZZ_CHECK(chunk.status().code() == ais::Status::Code::kCorruption);
    return;
  }
  ais::InventoryChunkEncoder enc;
  for (const auto& [name, entry] : chunk->entries) enc.Add(name, entry);
  FUZZ_CHECK(enc.count() == chunk->entries.size());
  std::string hash;
  FUZZ_CHECK(enc.Finish(&hash) == raw);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string raw(reinterpret_cast<const char*>(data), size);
  Check(raw);
  if (raw.size() >= kChunkHeader) {
    uint64_t h = XXH64(raw.data() + kChunkHeader, raw.size() - kChunkHeader, 0);
    for (int i = 0; i < 8; ++i) raw[12 + i] = static_cast<char>((h >> (8 * i)) & 0xff);
    Check(raw);
  }
  return 0;
}
