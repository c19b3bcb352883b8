// aistore._native.HttpClient: keep-alive requests over HttpClient with the GIL released: get()
// lands a whole body in a new bytes object, open() returns an HttpResponse read with readinto.
// A reply that cannot be parsed raises HttpError; a failed or broken connection its subclass
// ConnectionFailed, timeouts its subclasses ConnectTimeout and ReadTimeout.
#pragma once

#include <pybind11/pybind11.h>

namespace aisnative {

// Adds HttpClient, HttpResponse, HttpError(OSError) and its subclasses ConnectionFailed,
// ConnectTimeout and ReadTimeout.
void AddHttpClientTypes(pybind11::module_& module);

}  // namespace aisnative
