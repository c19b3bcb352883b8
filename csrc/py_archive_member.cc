#include "py_archive_member.h"

#include <structmember.h>

namespace aisnative {
namespace {

// Holds only bytes and str: no reference cycle can go through it, so it is not GC-tracked (one
// is made per file; tracking would cost more than the rest of it).
struct Member {
  PyObject_HEAD
  PyObject* raw_name;  // bytes, as stored in the archive
  PyObject* name;      // str, decoded from raw_name on first access; nullptr until then
  PyObject* data;      // bytes
};

PyTypeObject* member_type = nullptr;  // owned by the module (strong reference kept here)

void MemberDealloc(PyObject* self) {
  auto* m = reinterpret_cast<Member*>(self);
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(m->raw_name);
  Py_XDECREF(m->name);
  Py_XDECREF(m->data);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* MemberName(PyObject* self, void*) {
  auto* m = reinterpret_cast<Member*>(self);
  if (m->name == nullptr) {
    // As os.fsdecode would on a UTF-8 system: bytes that are not UTF-8 survive a round trip.
    m->name = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(m->raw_name), PyBytes_GET_SIZE(m->raw_name),
                                   "surrogateescape");
    if (m->name == nullptr) return nullptr;
  }
  Py_INCREF(m->name);
  return m->name;
}

PyObject* MemberRepr(PyObject* self) {
  auto* m = reinterpret_cast<Member*>(self);
  return PyUnicode_FromFormat("ArchiveMember(raw_name=%R, size=%zd)", m->raw_name,
                              PyBytes_GET_SIZE(m->data));
}

PyObject* MemberNew(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject* raw_name = nullptr;
  PyObject* data = nullptr;
  static const char* kwlist[] = {"raw_name", "data", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "SS", const_cast<char**>(kwlist), &raw_name,
                                   &data)) {
    return nullptr;
  }
  auto* m = reinterpret_cast<Member*>(type->tp_alloc(type, 0));
  if (m == nullptr) return nullptr;
  Py_INCREF(raw_name);
  Py_INCREF(data);
  m->raw_name = raw_name;
  m->name = nullptr;
  m->data = data;
  return reinterpret_cast<PyObject*>(m);
}

PyMemberDef kMemberFields[] = {
    {"raw_name", T_OBJECT_EX, offsetof(Member, raw_name), READONLY,
     "The name as stored in the archive (bytes)."},
    {"data", T_OBJECT_EX, offsetof(Member, data), READONLY, "The file's bytes."},
    {nullptr, 0, 0, 0, nullptr},
};

PyGetSetDef kMemberGetSet[] = {
    {"name", MemberName, nullptr,
     "The name as str (UTF-8, undecodable bytes as surrogate escapes), decoded on first use.",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kMemberSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(MemberNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(MemberDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(MemberRepr)},
    {Py_tp_members, kMemberFields},
    {Py_tp_getset, kMemberGetSet},
    {Py_tp_doc, const_cast<char*>("ArchiveMember(raw_name, data): one regular file of an archive.")},
    {0, nullptr},
};

PyType_Spec kMemberSpec = {
    "aistore._native.ArchiveMember", sizeof(Member), 0, Py_TPFLAGS_DEFAULT, kMemberSlots,
};

}  // namespace

bool AddArchiveMemberType(PyObject* module) {
  PyObject* type = PyType_FromSpec(&kMemberSpec);
  if (type == nullptr) return false;
  if (PyModule_AddObjectRef(module, "ArchiveMember", type) < 0) {
    Py_DECREF(type);
    return false;
  }
  member_type = reinterpret_cast<PyTypeObject*>(type);
  return true;
}

PyObject* NewArchiveMember(PyObject* raw_name, PyObject* data) {
  auto* m = reinterpret_cast<Member*>(member_type->tp_alloc(member_type, 0));
  if (m == nullptr) {
    Py_DECREF(raw_name);
    Py_DECREF(data);
    return nullptr;
  }
  m->raw_name = raw_name;
  m->name = nullptr;
  m->data = data;
  return reinterpret_cast<PyObject*>(m);
}

}  // namespace aisnative
