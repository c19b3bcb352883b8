#include "fillable_bytes.h"

#include <deque>

namespace aisnative {
namespace {

PyTypeObject* fillable_type = nullptr;  // owned; set by AddFillableTypes

struct PiecePool;

// FillableBytes(size): a new bytes object of `size` bytes that readers fill in place (a socket's
// recv_into through memoryview(f)) before anyone else sees it; take() hands it out. Streaming
// readers receive straight into the bytes they yield, without copying them out of a buffer.
// Safety: every buffer view holds a reference to the FillableBytes (the storage outlives it),
// take() refuses while a view is alive, and no view can be made after take(): the bytes handed
// out is never written again, unless its pool refills it once nobody else holds it.
struct FillableBytes {
  PyObject_HEAD
  PyObject* bytes;     // owned; nullptr once taken
  Py_ssize_t exports;  // live buffer views
  PiecePool* pool;     // owned or nullptr: keeps the bytes when taken (or dropped untaken)
};

// PiecePool(piece_size, limit): the bytes of `piece_size` that its FillableBytes handed out,
// kept by strong reference, oldest first, at most limit / piece_size of them (the oldest is let
// go to make room). An entry whose only reference is the pool's can be seen by nobody - in
// CPython a bytes object's reader holds a reference to it: a variable, a memoryview or numpy
// array of it (their base), a Py_buffer of C code running without the GIL - so it is filled
// again: the pages are already faulted in, where fresh heap costs a page fault per 4 KiB.
// Guarded by the GIL: no method releases it. A free-threaded build keeps nothing (limit 0).
struct PiecePool {
  PyObject_HEAD
  Py_ssize_t piece_size;
  Py_ssize_t capacity;            // most entries
  std::deque<PyObject*>* pieces;  // owned, and so are the references in it
  Py_ssize_t reused;              // pieces handed out again
  Py_ssize_t allocated;           // new pieces of piece_size
};

// A bytes object filled again must not keep the cached hash of its former contents.
void ForgetHash(PyObject* bytes) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // ob_shash, deprecated in 3.12
  reinterpret_cast<PyBytesObject*>(bytes)->ob_shash = -1;
#pragma GCC diagnostic pop
}

// Keeps a reference to `bytes` if it is one of the pool's size. REQUIRES: the GIL.
void Keep(PiecePool* pool, PyObject* bytes) {
  if (pool->capacity == 0 || PyBytes_GET_SIZE(bytes) != pool->piece_size) return;
  Py_INCREF(bytes);
  pool->pieces->push_back(bytes);
  while (static_cast<Py_ssize_t>(pool->pieces->size()) > pool->capacity) {
    PyObject* oldest = pool->pieces->front();
    pool->pieces->pop_front();
    Py_DECREF(oldest);  // a bytes object: runs no Python code
  }
}

// A FillableBytes of `bytes` (stolen); `pool` may be nullptr.
PyObject* NewFillable(PyObject* bytes, PiecePool* pool) {
  auto* self = reinterpret_cast<FillableBytes*>(fillable_type->tp_alloc(fillable_type, 0));
  if (self == nullptr) {
    Py_DECREF(bytes);
    return nullptr;
  }
  self->bytes = bytes;
  self->exports = 0;
  Py_XINCREF(reinterpret_cast<PyObject*>(pool));
  self->pool = pool;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* FillableNew(PyTypeObject*, PyObject* args, PyObject* kwds) {
  Py_ssize_t size = 0;
  static const char* kwlist[] = {"size", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "n", const_cast<char**>(kwlist), &size)) return nullptr;
  if (size < 0) {
    PyErr_SetString(PyExc_ValueError, "size must not be negative");
    return nullptr;
  }
  PyObject* bytes = PyBytes_FromStringAndSize(nullptr, size);
  if (bytes == nullptr) return nullptr;
  return NewFillable(bytes, nullptr);
}

void FillableDealloc(PyObject* self) {
  auto* f = reinterpret_cast<FillableBytes*>(self);
  PyTypeObject* type = Py_TYPE(self);
  // Untaken bytes were seen by nobody (a view would keep `self` alive): fine to fill again.
  if (f->bytes != nullptr && f->pool != nullptr) Keep(f->pool, f->bytes);
  Py_XDECREF(f->bytes);
  Py_XDECREF(reinterpret_cast<PyObject*>(f->pool));
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
  if (f->pool != nullptr) Keep(f->pool, out);
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

PyObject* PoolNew(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  Py_ssize_t piece_size = 0;
  Py_ssize_t limit = 0;
  static const char* kwlist[] = {"piece_size", "limit", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "nn", const_cast<char**>(kwlist), &piece_size,
                                   &limit)) {
    return nullptr;
  }
  if (piece_size <= 0 || limit < 0) {
    PyErr_SetString(PyExc_ValueError, "piece_size must be positive and limit not negative");
    return nullptr;
  }
  auto* self = reinterpret_cast<PiecePool*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->pieces = new (std::nothrow) std::deque<PyObject*>();
  if (self->pieces == nullptr) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->piece_size = piece_size;
#ifdef Py_GIL_DISABLED
  self->capacity = 0;  // a reference count alone does not prove that no thread holds a piece
#else
  self->capacity = limit / piece_size;
#endif
  self->reused = 0;
  self->allocated = 0;
  return reinterpret_cast<PyObject*>(self);
}

void PoolClear(PiecePool* p) {
  std::deque<PyObject*> pieces;
  pieces.swap(*p->pieces);  // the pool is consistent before any reference goes
  for (PyObject* piece : pieces) Py_DECREF(piece);
}

void PoolDealloc(PyObject* self) {
  auto* p = reinterpret_cast<PiecePool*>(self);
  PyTypeObject* type = Py_TYPE(self);
  if (p->pieces != nullptr) {
    PoolClear(p);
    delete p->pieces;
  }
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* PoolFillable(PyObject* self, PyObject* arg) {
  auto* p = reinterpret_cast<PiecePool*>(self);
  const Py_ssize_t size = PyLong_AsSsize_t(arg);
  if (size == -1 && PyErr_Occurred()) return nullptr;
  if (size < 0) {
    PyErr_SetString(PyExc_ValueError, "size must not be negative");
    return nullptr;
  }
  if (size != p->piece_size) {
    PyObject* bytes = PyBytes_FromStringAndSize(nullptr, size);
    return bytes == nullptr ? nullptr : NewFillable(bytes, nullptr);
  }
  for (auto it = p->pieces->begin(); it != p->pieces->end(); ++it) {
    PyObject* piece = *it;
    if (Py_REFCNT(piece) == 1) {  // only the pool holds it: nobody can see it
      p->pieces->erase(it);
      ForgetHash(piece);
      ++p->reused;
      return NewFillable(piece, p);
    }
  }
  PyObject* bytes = PyBytes_FromStringAndSize(nullptr, size);
  if (bytes == nullptr) return nullptr;
  ++p->allocated;
  return NewFillable(bytes, p);
}

PyObject* PoolClearMethod(PyObject* self, PyObject*) {
  PoolClear(reinterpret_cast<PiecePool*>(self));
  Py_RETURN_NONE;
}

PyObject* PoolIdleBytes(PyObject* self, void*) {
  auto* p = reinterpret_cast<PiecePool*>(self);
  Py_ssize_t idle = 0;
  for (PyObject* piece : *p->pieces) {
    if (Py_REFCNT(piece) == 1) idle += p->piece_size;
  }
  return PyLong_FromSsize_t(idle);
}

PyObject* PoolLimit(PyObject* self, void*) {
  auto* p = reinterpret_cast<PiecePool*>(self);
  return PyLong_FromSsize_t(p->capacity * p->piece_size);
}

PyObject* PoolPieceSize(PyObject* self, void*) {
  return PyLong_FromSsize_t(reinterpret_cast<PiecePool*>(self)->piece_size);
}

PyObject* PoolReused(PyObject* self, void*) {
  return PyLong_FromSsize_t(reinterpret_cast<PiecePool*>(self)->reused);
}

PyObject* PoolAllocated(PyObject* self, void*) {
  return PyLong_FromSsize_t(reinterpret_cast<PiecePool*>(self)->allocated);
}

PyObject* PoolKept(PyObject* self, void*) {
  return PyLong_FromSize_t(reinterpret_cast<PiecePool*>(self)->pieces->size());
}

PyMethodDef kPoolMethods[] = {
    {"fillable", PoolFillable, METH_O,
     "fillable(size): a FillableBytes; of piece_size, a kept piece nobody else holds if any."},
    {"clear", PoolClearMethod, METH_NOARGS, "Let go of every kept piece."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kPoolGetSet[] = {
    {"idle_bytes", PoolIdleBytes, nullptr, "Bytes of kept pieces that only the pool holds.",
     nullptr},
    {"limit", PoolLimit, nullptr, "Most bytes of pieces kept.", nullptr},
    {"piece_size", PoolPieceSize, nullptr, "Size of the pieces kept.", nullptr},
    {"reused", PoolReused, nullptr, "Pieces filled again so far.", nullptr},
    {"allocated", PoolAllocated, nullptr, "New pieces of piece_size so far.", nullptr},
    {"kept", PoolKept, nullptr, "Pieces kept, held by others or not.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kPoolSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(PoolNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(PoolDealloc)},
    {Py_tp_methods, kPoolMethods},
    {Py_tp_getset, kPoolGetSet},
    {Py_tp_doc, const_cast<char*>("PiecePool(piece_size, limit): bytes pieces filled again "
                                  "once nobody holds them.")},
    {0, nullptr},
};

PyType_Spec kPoolSpec = {
    "aistore._native.PiecePool", sizeof(PiecePool), 0, Py_TPFLAGS_DEFAULT, kPoolSlots,
};

}  // namespace

bool AddFillableTypes(PyObject* module) {
  PyObject* fillable = PyType_FromSpec(&kFillableSpec);
  if (fillable == nullptr) return false;
  fillable_type = reinterpret_cast<PyTypeObject*>(fillable);
  Py_INCREF(fillable);  // one reference for fillable_type, one for the module
  if (PyModule_AddObject(module, "FillableBytes", fillable) < 0) {
    Py_DECREF(fillable);
    return false;
  }
  PyObject* pool = PyType_FromSpec(&kPoolSpec);
  if (pool == nullptr) return false;
  if (PyModule_AddObject(module, "PiecePool", pool) < 0) {
    Py_DECREF(pool);
    return false;
  }
  return true;
}

}  // namespace aisnative
