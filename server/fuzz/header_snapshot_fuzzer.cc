// The input is the body of a header snapshot (HeaderCache::Save's file without its magic and its
// checksum), framed by the target as a well-formed file so that the bytes reach the record reader
// rather than the checksum, then loaded by HeaderCache::Load.
//
// Properties: the load succeeds or says kCorruption (never reads past the file: ASan); it keeps
// no more headers than the cache then holds; the file is gone after every load (good for one
// start, damaged or not).
#include <unistd.h>
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_check.h"
#include "store/header_cache.h"
#include "util/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/fuzz_header_snapshot_" + std::to_string(::getpid());
  }();
  std::string file = "AISHDRS1";
  file.append(reinterpret_cast<const char*>(data), size);
  const uint64_t sum = XXH64(file.data(), file.size(), 0);
  file.append(reinterpret_cast<const char*>(&sum), sizeof(sum));
  FUZZ_CHECK(ais::AtomicWriteFile(path, file, false).ok());

  ais::HeaderCache cache(1000);
  auto kept = cache.Load(path);
  FUZZ_CHECK(kept.ok() || kept.status().code() == ais::Status::Code::kCorruption);
  if (kept.ok()) FUZZ_CHECK(*kept <= cache.size());
  FUZZ_CHECK(::access(path.c_str(), F_OK) != 0);
  return 0;
}
