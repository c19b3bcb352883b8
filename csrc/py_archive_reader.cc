#include "py_archive_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>

#include "archive_reader.h"
#include "py_archive_member.h"
#include "py_byte_source.h"
#include "py_http_client.h"

namespace aisnative {
namespace {

constexpr Py_ssize_t kDefaultBuffer = 256 << 10;
constexpr Py_ssize_t kMinBuffer = 4 << 10;
// The GIL is released around a step that may take long: copying a member of at least this
// size, or anything in a compressed stream. Headers and small members of a plain stream take
// a microsecond or two: releasing the GIL for them would cost as much, and hand it to any
// CPU-bound thread for up to its switch interval (5 ms) per member.
constexpr int64_t kReleaseGilFrom = 64 << 10;
// A zip member whose size comes after its data grows from this much.
constexpr Py_ssize_t kUnknownSizeStart = 64 << 10;

PyObject* format_error = nullptr;     // ArchiveFormatError(ValueError); owned
PyObject* truncated_error = nullptr;  // TruncatedArchiveError(ArchiveFormatError); owned

// Not GC-tracked: it holds the source's readinto, which cannot reach back to the reader unless
// a source stores its own reader (then the pair lives until the process ends).
struct Reader {
  PyObject_HEAD
  PySource* source;       // owned
  ArchiveReader* reader;  // owned; reads from *source
  PyObject* label;        // str naming the archive in error messages; owned
  PyObject* last_name;    // bytes: the name of the last regular file handed out, or nullptr
  Py_ssize_t count;       // regular files handed out
  bool busy;              // a call is reading (with the GIL released): no second one may start
  bool done;              // the end was reached or an error raised: iteration has stopped
};

// Raises the exception for a failed step: the source's own exception unchanged, else
// ArchiveFormatError or TruncatedArchiveError naming the archive and the member.
PyObject* Raise(Reader* r, ArchiveCode code, PyObject* member_name) {
  if (code == ArchiveCode::kSource && r->source->RestoreError()) return nullptr;
  const bool cut = code == ArchiveCode::kTruncated;
  PyObject* type = cut ? truncated_error : format_error;
  const char* what = cut ? "cut short: " : "";  // one phrase, whatever libarchive's words
  const char* msg = r->reader->message().c_str();
  if (member_name != nullptr) {
    PyErr_Format(type, "%U: member %zd %R: %s%s", r->label, r->count + 1, member_name, what, msg);
  } else if (r->last_name != nullptr) {
    PyErr_Format(type, "%U: after member %zd %R: %s%s", r->label, r->count, r->last_name, what,
                 msg);
  } else {
    PyErr_Format(type, "%U: %s%s", r->label, what, msg);
  }
  return nullptr;
}

// Reads the rest of the current entry (exactly `size` bytes) into a new bytes object, then
// reads on to the entry's end, where zip checks its CRC.
PyObject* ReadKnownSize(Reader* r, int64_t size, PyObject* name) {
  PyObject* data = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
  if (data == nullptr) return nullptr;
  char* dst = PyBytes_AS_STRING(data);
  ArchiveCode code = ArchiveCode::kOk;
  int64_t filled = 0;
  bool longer = false;
  auto fill = [&] {
    size_t got = 0;
    while (filled < size) {
      code = r->reader->ReadData(dst + filled, static_cast<size_t>(size - filled), &got);
      if (code != ArchiveCode::kOk || got == 0) return;
      filled += static_cast<int64_t>(got);
    }
    char probe;
    code = r->reader->ReadData(&probe, 1, &got);
    longer = code == ArchiveCode::kOk && got > 0;
  };
  if (size >= kReleaseGilFrom || r->reader->compressed()) {
    // Nobody else can see `data` yet: filling it unlocked is safe.
    Py_BEGIN_ALLOW_THREADS fill();
    Py_END_ALLOW_THREADS
  } else {
    fill();
  }
  if (code != ArchiveCode::kOk) {
    Py_DECREF(data);
    return Raise(r, code, name);
  }
  if (filled < size || longer) {
    Py_DECREF(data);
    PyErr_Format(filled < size ? truncated_error : format_error,
                 "%U: member %zd %R: %s than its header says", r->label, r->count + 1, name,
                 filled < size ? "cut short: shorter" : "longer");
    return nullptr;
  }
  return data;
}

// Reads the current entry to its end into a bytes object that grows as it fills.
PyObject* ReadUnknownSize(Reader* r, PyObject* name) {
  Py_ssize_t cap = kUnknownSizeStart;
  Py_ssize_t filled = 0;
  PyObject* data = PyBytes_FromStringAndSize(nullptr, cap);
  if (data == nullptr) return nullptr;
  for (;;) {
    if (filled == cap) {
      cap *= 2;
      if (_PyBytes_Resize(&data, cap) < 0) return nullptr;
    }
    ArchiveCode code;
    size_t got = 0;
    char* dst = PyBytes_AS_STRING(data) + filled;
    size_t room = static_cast<size_t>(cap - filled);
    Py_BEGIN_ALLOW_THREADS code = r->reader->ReadData(dst, room, &got);
    Py_END_ALLOW_THREADS
    if (code != ArchiveCode::kOk) {
      Py_DECREF(data);
      return Raise(r, code, name);
    }
    if (got == 0) break;
    filled += static_cast<Py_ssize_t>(got);
  }
  if (_PyBytes_Resize(&data, filled) < 0) return nullptr;
  return data;
}

// The next regular file as an ArchiveMember; nullptr without an error after the last one.
PyObject* NextMember(Reader* r) {
  for (;;) {
    EntryInfo e;
    ArchiveCode code;
    if (r->reader->compressed() || r->count == 0) {  // the first one opens and detects
      Py_BEGIN_ALLOW_THREADS code = r->reader->NextEntry(&e);
      Py_END_ALLOW_THREADS
    } else {
      code = r->reader->NextEntry(&e);
    }
    if (code == ArchiveCode::kEnd) return nullptr;
    if (code != ArchiveCode::kOk) return Raise(r, code, nullptr);
    if (e.type != S_IFREG || e.hardlink) continue;  // the reader skips their data
    PyObject* name = PyBytes_FromStringAndSize(e.name, static_cast<Py_ssize_t>(e.name_len));
    if (name == nullptr) return nullptr;
    PyObject* data = e.size >= 0 ? ReadKnownSize(r, e.size, name) : ReadUnknownSize(r, name);
    if (data == nullptr) {
      Py_DECREF(name);
      return nullptr;
    }
    r->count++;
    Py_INCREF(name);
    Py_XSETREF(r->last_name, name);
    return NewArchiveMember(name, data);
  }
}

bool Enter(Reader* r) {
  if (r->busy) {
    PyErr_SetString(PyExc_RuntimeError, "ArchiveReader: another call is reading it");
    return false;
  }
  r->busy = true;
  return true;
}

PyObject* ReaderIterNext(PyObject* self) {
  auto* r = reinterpret_cast<Reader*>(self);
  if (r->done) return nullptr;
  if (!Enter(r)) return nullptr;
  PyObject* out = NextMember(r);
  r->busy = false;
  if (out == nullptr) r->done = true;  // as a generator: stopped for good after an error
  return out;
}

PyObject* ReaderNew(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject* source = nullptr;
  PyObject* label = nullptr;
  Py_ssize_t buffer_size = kDefaultBuffer;
  static const char* kwlist[] = {"source", "label", "buffer_size", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$Un", const_cast<char**>(kwlist), &source,
                                   &label, &buffer_size)) {
    return nullptr;
  }
  PyObject* own_label = label != nullptr ? (Py_INCREF(label), label)
                                         : PyUnicode_FromString("archive");
  if (own_label == nullptr) return nullptr;
  const Py_ssize_t size = std::max(buffer_size, kMinBuffer);
  // A native reply is read in C++; anything else through its readinto.
  PySource* src = NewHttpResponseSource(source, static_cast<size_t>(size));
  if (src == nullptr) src = PyByteSource::Create(source, size);
  if (src == nullptr) {
    Py_DECREF(own_label);
    return nullptr;
  }
  auto* r = reinterpret_cast<Reader*>(type->tp_alloc(type, 0));
  if (r == nullptr) {
    delete src;
    Py_DECREF(own_label);
    return nullptr;
  }
  r->source = src;
  r->reader = new ArchiveReader(src);
  r->label = own_label;
  r->last_name = nullptr;
  r->count = 0;
  r->busy = false;
  r->done = false;
  return reinterpret_cast<PyObject*>(r);
}

void ReaderDealloc(PyObject* self) {
  auto* r = reinterpret_cast<Reader*>(self);
  PyTypeObject* type = Py_TYPE(self);
  delete r->reader;  // before its source
  delete r->source;
  Py_XDECREF(r->label);
  Py_XDECREF(r->last_name);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* ReaderIter(PyObject* self) {
  Py_INCREF(self);
  return self;
}

PyType_Slot kReaderSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(ReaderNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(ReaderDealloc)},
    {Py_tp_iter, reinterpret_cast<void*>(ReaderIter)},
    {Py_tp_iternext, reinterpret_cast<void*>(ReaderIterNext)},
    {Py_tp_doc, const_cast<char*>(
                    "ArchiveReader(source, *, label='archive', buffer_size=256 KiB): the regular "
                    "files of a tar or zip stream (gzip, lz4, zstd too) read from "
                    "source.readinto, in order, as ArchiveMember.")},
    {0, nullptr},
};

PyType_Spec kReaderSpec = {
    "aistore._native.ArchiveReader", sizeof(Reader), 0, Py_TPFLAGS_DEFAULT, kReaderSlots,
};

bool AddObject(PyObject* module, const char* name, PyObject* obj) {
  if (obj == nullptr) return false;
  return PyModule_AddObjectRef(module, name, obj) == 0;
}

}  // namespace

bool AddArchiveReaderTypes(PyObject* module) {
  format_error = PyErr_NewExceptionWithDoc(
      "aistore._native.ArchiveFormatError",
      "The bytes are not a (supported) archive, or the archive is damaged.", PyExc_ValueError,
      nullptr);
  if (!AddObject(module, "ArchiveFormatError", format_error)) return false;
  truncated_error = PyErr_NewExceptionWithDoc(
      "aistore._native.TruncatedArchiveError",
      "The archive ended inside a header or a member, or before its end-of-archive marker.",
      format_error, nullptr);
  if (!AddObject(module, "TruncatedArchiveError", truncated_error)) return false;
  if (!AddArchiveMemberType(module)) return false;
  PyObject* reader_type = PyType_FromSpec(&kReaderSpec);
  bool ok = AddObject(module, "ArchiveReader", reader_type);
  Py_XDECREF(reader_type);
  return ok;
}

}  // namespace aisnative
