// TarScanner: walks the entries of an uncompressed tar, reading headers only (data is skipped),
// so a member can be served in place from the shard's own files. Understands USTAR (name +
// prefix), PAX extended headers (path, size), GNU long names ('L') and base-256 sizes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "util/status.h"

namespace ais {

struct TarEntry {
  std::string name;
  uint64_t size = 0;
  uint64_t offset = 0;  // of the entry's data in the archive
  bool regular = false; // a regular file (typeflag '0', NUL or '7')
};

class TarScanner {
 public:
  // `read` reads exactly [off, off+len) of the archive; `total` is the archive's size.
  using ReadFn = std::function<Status(uint64_t off, void* buf, size_t len)>;
  TarScanner(ReadFn read, uint64_t total) : read_(std::move(read)), total_(total) {}

  // The next entry (regular or not); false at the end of the archive (a zero block or EOF).
  // A damaged header is kCorruption.
  Result<bool> Next(TarEntry* e);

 private:
  Result<std::string> ReadData(uint64_t off, uint64_t len);

  ReadFn read_;
  uint64_t total_;
  uint64_t pos_ = 0;
};

}  // namespace ais
