#include "py_byte_source.h"

namespace aisnative {

PyByteSource* PyByteSource::Create(PyObject* obj, Py_ssize_t buffer_size) {
  PyObject* readinto = PyObject_GetAttrString(obj, "readinto");
  if (readinto == nullptr) return nullptr;
  PyObject* buffer = PyByteArray_FromStringAndSize(nullptr, buffer_size);
  PyObject* view = buffer != nullptr ? PyMemoryView_FromObject(buffer) : nullptr;
  if (view == nullptr) {
    Py_XDECREF(buffer);
    Py_DECREF(readinto);
    return nullptr;
  }
  return new PyByteSource(readinto, buffer, view);
}

PyByteSource::PyByteSource(PyObject* readinto, PyObject* buffer, PyObject* view)
    : readinto_(readinto),
      buffer_(buffer),
      view_(view),
      data_(PyByteArray_AS_STRING(buffer)),
      size_(PyByteArray_GET_SIZE(buffer)) {}

PyByteSource::~PyByteSource() {
  Py_XDECREF(err_type_);
  Py_XDECREF(err_value_);
  Py_XDECREF(err_tb_);
  Py_DECREF(view_);
  Py_DECREF(buffer_);
  Py_DECREF(readinto_);
}

ssize_t PyByteSource::Next(const void** block) {
  PyGILState_STATE gil = PyGILState_Ensure();
  ssize_t n = -1;
  PyObject* r = PyObject_CallOneArg(readinto_, view_);
  if (r != nullptr) {
    n = r == Py_None ? 0 : PyLong_AsSsize_t(r);  // None: nothing (a raw stream's "no data")
    Py_DECREF(r);
    if (n == -1 && PyErr_Occurred()) {
      // not an int: the exception says so
    } else if (n < 0 || n > size_) {
      PyErr_Format(PyExc_ValueError, "readinto returned %zd for a buffer of %zd bytes", n, size_);
      n = -1;
    }
  }
  if (n < 0 && err_type_ == nullptr) PyErr_Fetch(&err_type_, &err_value_, &err_tb_);
  PyErr_Clear();
  PyGILState_Release(gil);
  *block = data_;
  return n;
}

bool PyByteSource::RestoreError() {
  if (err_type_ == nullptr) return false;
  PyErr_Restore(err_type_, err_value_, err_tb_);
  err_type_ = err_value_ = err_tb_ = nullptr;
  return true;
}

}  // namespace aisnative
