// aistore._native.HttpClient: keep-alive requests over HttpClient with the GIL released: get()
// lands a whole body in a new bytes object, open() returns an HttpResponse read with readinto.
// A reply that cannot be parsed raises HttpError; a failed or broken connection its subclass
// ConnectionFailed, timeouts its subclasses ConnectTimeout and ReadTimeout.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>

#include "py_byte_source.h"

namespace aisnative {

// A source reading the body of `obj` in C++ when it is a `_native.HttpResponse`, else nullptr
// (no error set). The caller owns it. REQUIRES: the GIL.
PySource* NewHttpResponseSource(PyObject* obj, size_t buffer_size);

// Adds HttpClient, HttpResponse, HttpError(OSError) and its subclasses ConnectionFailed,
// ConnectTimeout and ReadTimeout.
void AddHttpClientTypes(pybind11::module_& module);

}  // namespace aisnative
