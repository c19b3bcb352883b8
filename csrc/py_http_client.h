// aistore._native.HttpClient: keep-alive requests over HttpClient with the GIL released: get()
// lands a whole body in a new bytes object, open() returns an HttpResponse read with readinto.
// Transport failures raise HttpError or one of its two timeout subclasses.
#pragma once

#include <pybind11/pybind11.h>

namespace aisnative {

// Adds HttpClient, HttpResponse, HttpError(OSError), ConnectTimeout(HttpError) and
// ReadTimeout(HttpError).
void AddHttpClientTypes(pybind11::module_& module);

}  // namespace aisnative
