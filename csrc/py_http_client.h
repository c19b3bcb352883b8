// aistore._native.HttpClient: keep-alive GETs whose body lands in a new bytes object with the
// GIL released (HttpClient), and the exceptions its transport failures raise.
#pragma once

#include <pybind11/pybind11.h>

namespace aisnative {

// Adds HttpClient, HttpError(OSError), ConnectTimeout(HttpError) and ReadTimeout(HttpError).
void AddHttpClientTypes(pybind11::module_& module);

}  // namespace aisnative
