// The input is an uncompressed tar, walked by TarScanner (archive/tar_scanner.h) through a read
// callback over memory, as TarShard walks a shard's object.
//
// Properties: the scanner only reads inside the archive (its callback's contract, which
// ObjectHandle::ReadAt REQUIRES); it always moves forward, so a walk ends within one entry per
// 512-byte block; a regular member's data lies inside the archive; the members found, written
// again with the writer's EncodeTarHeader, scan back to the same names and sizes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archive/tar_header.h"
#include "archive/tar_scanner.h"
#include "fuzz_check.h"

namespace {

struct Member {
  std::string name;
  uint64_t size;
  uint64_t offset;
};

// Every entry of `tar`; false if the scanner reported damage.
bool Scan(std::string_view tar, std::vector<Member>* regular) {
  ais::TarScanner scanner(
      [tar](uint64_t off, void* buf, size_t len) {
        FUZZ_CHECK(off <= tar.size() && len <= tar.size() - off);
        std::memcpy(buf, tar.data() + off, len);
        return ais::Status::OK();
      },
      tar.size());
  uint64_t last_offset = 0;
  for (uint64_t n = 0;; ++n) {
    FUZZ_CHECK(n <= tar.size() / ais::kTarBlock);
    ais::TarEntry e;
    auto more = scanner.Next(&e);
    if (!more.ok()) {
      FUZZ_CHECK(more.status().code() == ais::Status::Code::kCorruption);
      return false;
    }
    if (!*more) return true;
    FUZZ_CHECK(e.offset % ais::kTarBlock == 0 && e.offset > last_offset && e.offset <= tar.size());
    last_offset = e.offset;
    if (e.regular) {
      FUZZ_CHECK(e.size <= tar.size() - e.offset);
      regular->push_back(Member{e.name, e.size, e.offset});
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view tar(reinterpret_cast<const char*>(data), size);
  std::vector<Member> members;
  Scan(tar, &members);

  // Names with a NUL cannot be written (the writer's names are object names: no control bytes).
  std::string again;
  std::vector<Member> want;
  for (const auto& m : members) {
    if (m.name.find('\0') != std::string::npos) continue;
    again += ais::EncodeTarHeader(m.name, m.size, 0);
    want.push_back(Member{m.name, m.size, again.size()});
    again.append(tar.substr(m.offset, m.size));
    again.append(ais::TarPadding(m.size), '\0');
  }
  again.append(ais::kTarTrailer, '\0');
  std::vector<Member> got;
  FUZZ_CHECK(Scan(again, &got));
  FUZZ_CHECK(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    FUZZ_CHECK(got[i].name == want[i].name && got[i].size == want[i].size && got[i].offset == want[i].offset);
  }
  return 0;
}
