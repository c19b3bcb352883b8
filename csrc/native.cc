// aistore._native: hot loops of the client that Python does slowly. Every function releases the
// GIL while it touches bytes, so DataLoader threads and download workers run in parallel. The
// fillable bytes of streams, the archive reader (libarchive) and the HTTP client are their own
// sets of files: fillable_bytes.h, py_archive_reader.h, py_http_client.h.
#include <pybind11/pybind11.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fillable_bytes.h"
#include "py_archive_reader.h"
#include "py_http_client.h"

namespace py = pybind11;

namespace {

// XXH64 of any buffer (bytes, memoryview, numpy array, shared memory), as AIS spells checksums:
// 16 lowercase hex digits.
std::string Xxhash64Hex(py::buffer data, uint64_t seed) {
  py::buffer_info info = data.request();
  if (!PyBuffer_IsContiguous(reinterpret_cast<Py_buffer*>(info.view()), 'A')) {
    throw py::value_error("xxhash64_hex needs a contiguous buffer");
  }
  const auto size = static_cast<size_t>(info.size * info.itemsize);
  uint64_t h;
  {
    py::gil_scoped_release release;
    h = XXH64(info.ptr, size, seed);
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

// A new bytes object holding a copy of `data`. The copy runs without the GIL: streaming readers
// copy whole ranges (megabytes) out of their ring while worker threads keep receiving.
py::bytes CopyToBytes(py::buffer data) {
  py::buffer_info info = data.request();
  if (!PyBuffer_IsContiguous(reinterpret_cast<Py_buffer*>(info.view()), 'C')) {
    throw py::value_error("copy_to_bytes needs a C-contiguous buffer");
  }
  const auto size = static_cast<Py_ssize_t>(info.size * info.itemsize);
  PyObject* out = PyBytes_FromStringAndSize(nullptr, size);
  if (out == nullptr) throw py::error_already_set();
  {
    // Nobody else can see `out` yet, so filling it unlocked is safe.
    py::gil_scoped_release release;
    std::memcpy(PyBytes_AS_STRING(out), info.ptr, static_cast<size_t>(size));
  }
  return py::reinterpret_steal<py::bytes>(out);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "Native hot paths of the aistore client";
  m.def("xxhash64_hex", &Xxhash64Hex, py::arg("data"), py::arg("seed") = 0,
        "XXH64 of a contiguous buffer as 16 lowercase hex digits (the AIS 'xxhash' checksum).");
  m.def("copy_to_bytes", &CopyToBytes, py::arg("data"),
        "A bytes copy of a contiguous buffer, made with the GIL released.");
  if (!aisnative::AddFillableTypes(m.ptr())) throw py::error_already_set();
  if (!aisnative::AddArchiveReaderTypes(m.ptr())) throw py::error_already_set();
  aisnative::AddHttpClientTypes(m);
}
