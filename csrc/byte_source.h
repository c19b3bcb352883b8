// ByteSource: where an archive reader's bytes come from, one block at a time.
#pragma once

#include <sys/types.h>

namespace aisnative {

class ByteSource {
 public:
  virtual ~ByteSource() = default;

  // The next bytes of the stream: stores a pointer to them in *block and returns their count,
  // 0 at the end of the stream, -1 on failure (the source keeps the reason). The block stays
  // valid until the next call; the source owns it.
  // Callable with or without the GIL (a Python source takes it itself).
  virtual ssize_t Next(const void** block) = 0;
};

}  // namespace aisnative
