// The input is an inventory's index part (JSON), as read back from the `.sys-inventory` bucket
// by InventoryIndex::FromJson (inventory/inventory_format.h).
//
// Property: a decoded index, written by ToJson, decodes to the same index.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "inventory/inventory_format.h"

namespace {

bool Same(const ais::InventoryIndex& a, const ais::InventoryIndex& b) {
  if (a.prefix != b.prefix || a.props != b.props || a.started != b.started || a.finished != b.finished ||
      a.ntotal != b.ntotal || a.names_per_chunk != b.names_per_chunk || a.chunks.size() != b.chunks.size()) {
    return false;
  }
  for (size_t i = 0; i < a.chunks.size(); ++i) {
    const auto &x = a.chunks[i], &y = b.chunks[i];
    if (x.first != y.first || x.last != y.last || x.count != y.count || x.xxhash != y.xxhash) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto idx = ais::InventoryIndex::FromJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!idx.ok()) {
    FUZZ_CHECK(idx.status().code() == ais::Status::Code::kCorruption);
    return 0;
  }
  auto again = ais::InventoryIndex::FromJson(idx->ToJson());
  FUZZ_CHECK(again.ok() && Same(*again, *idx));
  return 0;
}
