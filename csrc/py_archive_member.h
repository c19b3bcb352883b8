// aistore._native.ArchiveMember: one regular file of an archive - its name, decoded on first
// use, and its bytes.
#pragma once

#include <Python.h>

namespace aisnative {

// Adds the type to `module`; false with a Python error set on failure.
bool AddArchiveMemberType(PyObject* module);

// A new member; steals both references. REQUIRES: the GIL, AddArchiveMemberType done,
// `raw_name` and `data` are bytes.
PyObject* NewArchiveMember(PyObject* raw_name, PyObject* data);

}  // namespace aisnative
