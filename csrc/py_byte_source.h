// PySource: a ByteSource whose failure is a Python exception. PyByteSource: one over a Python
// object's readinto(), filling a buffer it owns.
#pragma once

#include <Python.h>

#include "byte_source.h"

namespace aisnative {

// A ByteSource whose failure becomes a Python exception.
class PySource : public ByteSource {
 public:
  // Raises (sets as the current Python error) the failure of the last Next; false if there was
  // none. REQUIRES: the GIL.
  virtual bool RestoreError() = 0;
};

class PyByteSource : public PySource {
 public:
  // A source reading `obj.readinto` into a new buffer of `buffer_size` bytes; nullptr with a
  // Python error set when `obj` has no readinto or memory runs out. REQUIRES: the GIL.
  static PyByteSource* Create(PyObject* obj, Py_ssize_t buffer_size);
  ~PyByteSource() override;  // REQUIRES: the GIL
  PyByteSource(const PyByteSource&) = delete;
  PyByteSource& operator=(const PyByteSource&) = delete;

  // Calls readinto with the GIL taken for the call only. A raised exception is kept, as is,
  // for RestoreError; a count outside [0, buffer size] is a ValueError.
  ssize_t Next(const void** block) override;

  // Raises (sets as the current Python error) the exception a readinto call raised; false if
  // there was none. REQUIRES: the GIL.
  bool RestoreError() override;

 private:
  PyByteSource(PyObject* readinto, PyObject* buffer, PyObject* view);

  PyObject* const readinto_;  // owned: the bound method
  // Owned: the block. Python code may keep a view of it past a call (a misbehaving source):
  // the memory then lives on with that view, so it is never freed under anyone.
  PyObject* const buffer_;  // bytearray, never resized
  PyObject* const view_;    // memoryview of all of buffer_, passed to every call
  char* const data_;
  const Py_ssize_t size_;
  // The exception readinto raised (owned), kept until RestoreError.
  PyObject* err_type_ = nullptr;
  PyObject* err_value_ = nullptr;
  PyObject* err_tb_ = nullptr;
};

}  // namespace aisnative
