// ByteBuffer: an owned heap buffer whose bytes start uninitialized, for buffers a read is about
// to fill (std::string zero-fills what it grows by, a wasted pass over every byte). Move-only.
#pragma once

#include <cstddef>
#include <memory>

namespace ais {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  // `size` uninitialized bytes.
  explicit ByteBuffer(size_t size)
      : data_(std::make_unique_for_overwrite<char[]>(size)), size_(size), capacity_(size) {}

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes allocated: at least size().
  size_t capacity() const { return capacity_; }
  // Keeps the first `size` bytes (no reallocation). REQUIRES: size <= size().
  void Truncate(size_t size) { size_ = size; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace ais
