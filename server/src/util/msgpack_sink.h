// A msgpack-c write target that appends to a string, so that what is packed lands in its final
// buffer without a copy: msgpack::packer<MsgpackStringSink> pk(sink).
#pragma once

#include <cstddef>
#include <string>

namespace ais {

struct MsgpackStringSink {
  std::string* out;
  void write(const char* data, size_t n) { out->append(data, n); }
};

}  // namespace ais
