// aistore._native: hot loops of the client that Python does slowly. Every function releases the
// GIL while it touches bytes, so DataLoader threads and download workers run in parallel. The
// archive reader (libarchive) and the HTTP client are their own sets of files:
// py_archive_reader.h, py_http_client.h.
#include <pybind11/pybind11.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <string>

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

// FillableBytes(size): a new bytes object of `size` bytes that readers fill in place (a socket's
// recv_into through memoryview(f)) before anyone else sees it; take() hands it out. Streaming
// readers receive straight into the bytes they yield, without copying them out of a buffer.
// Safety: every buffer view holds a reference to the FillableBytes (the storage outlives it),
// take() refuses while a view is alive, and no view can be made after take(): the bytes handed
// out is never written again.
struct FillableBytes {
  PyObject_HEAD
  PyObject* bytes;     // owned; nullptr once taken
  Py_ssize_t exports;  // live buffer views
};

PyObject* FillableNew(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  Py_ssize_t size = 0;
  static const char* kwlist[] = {"size", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "n", const_cast<char**>(kwlist), &size)) return nullptr;
  if (size < 0) {
    PyErr_SetString(PyExc_ValueError, "size must not be negative");
    return nullptr;
  }
  PyObject* bytes = PyBytes_FromStringAndSize(nullptr, size);
  if (bytes == nullptr) return nullptr;
  auto* self = reinterpret_cast<FillableBytes*>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    Py_DECREF(bytes);
    return nullptr;
  }
  self->bytes = bytes;
  self->exports = 0;
  return reinterpret_cast<PyObject*>(self);
}

void FillableDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(reinterpret_cast<FillableBytes*>(self)->bytes);
  type->tp_free(self);
  Py_DECREF(type);
}

int FillableGetBuffer(PyObject* self, Py_buffer* view, int flags) {
  auto* f = reinterpret_cast<FillableBytes*>(self);
  if (f->bytes == nullptr) {
    PyErr_SetString(PyExc_BufferError, "FillableBytes: the bytes were taken already");
    view->obj = nullptr;
    return -1;
  }
  if (PyBuffer_FillInfo(view, self, PyBytes_AS_STRING(f->bytes), PyBytes_GET_SIZE(f->bytes),
                        /*readonly=*/0, flags) < 0) {
    return -1;
  }
  ++f->exports;
  return 0;
}

void FillableReleaseBuffer(PyObject* self, Py_buffer*) {
  --reinterpret_cast<FillableBytes*>(self)->exports;
}

PyObject* FillableTake(PyObject* self, PyObject*) {
  auto* f = reinterpret_cast<FillableBytes*>(self);
  if (f->bytes == nullptr) {
    PyErr_SetString(PyExc_BufferError, "FillableBytes: the bytes were taken already");
    return nullptr;
  }
  if (f->exports > 0) {
    PyErr_SetString(PyExc_BufferError, "FillableBytes: views of the bytes are still alive");
    return nullptr;
  }
  PyObject* out = f->bytes;
  f->bytes = nullptr;
  return out;
}

PyMethodDef kFillableMethods[] = {
    {"take", FillableTake, METH_NOARGS,
     "The filled bytes; BufferError while a view is alive or once taken."},
    {nullptr, nullptr, 0, nullptr},
};

PyType_Slot kFillableSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(FillableNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(FillableDealloc)},
    {Py_tp_methods, kFillableMethods},
    {Py_tp_doc, const_cast<char*>("FillableBytes(size): a bytes object filled in place, then taken.")},
    {Py_bf_getbuffer, reinterpret_cast<void*>(FillableGetBuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(FillableReleaseBuffer)},
    {0, nullptr},
};

PyType_Spec kFillableSpec = {
    "aistore._native.FillableBytes", sizeof(FillableBytes), 0, Py_TPFLAGS_DEFAULT, kFillableSlots,
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "Native hot paths of the aistore client";
  m.def("xxhash64_hex", &Xxhash64Hex, py::arg("data"), py::arg("seed") = 0,
        "XXH64 of a contiguous buffer as 16 lowercase hex digits (the AIS 'xxhash' checksum).");
  m.def("copy_to_bytes", &CopyToBytes, py::arg("data"),
        "A bytes copy of a contiguous buffer, made with the GIL released.");
  PyObject* fillable = PyType_FromSpec(&kFillableSpec);
  if (fillable == nullptr) throw py::error_already_set();
  m.add_object("FillableBytes", py::reinterpret_steal<py::object>(fillable));
  if (!aisnative::AddArchiveReaderTypes(m.ptr())) throw py::error_already_set();
  aisnative::AddHttpClientTypes(m);
}
