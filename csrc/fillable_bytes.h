// aistore._native.FillableBytes and PiecePool: bytes objects that worker threads fill in place (a
// socket's recv_into through a buffer view) before anyone else sees them, and a pool that fills
// such a bytes object again once its last user has let go of it, instead of new heap pages.
#pragma once

#include <Python.h>

namespace aisnative {

// Adds FillableBytes and PiecePool to `module`; false with a Python error set on failure.
bool AddFillableTypes(PyObject* module);

}  // namespace aisnative
