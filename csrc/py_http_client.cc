#include "py_http_client.h"

#include <pybind11/stl.h>

#include <boost/asio/error.hpp>
#include <memory>
#include <optional>
#include <string>

#include "http_client.h"

namespace py = pybind11;

namespace aisnative {
namespace {

PyObject* http_error = nullptr;       // HttpError(OSError); owned by the module
PyObject* connect_timeout = nullptr;  // ConnectTimeout(HttpError)
PyObject* read_timeout = nullptr;     // ReadTimeout(HttpError)

// Run while a wait goes on with the GIL released: lets Python's signal handlers run, so Ctrl-C
// stops a GET that waits for a silent server. A raised exception stays set for the caller.
bool SignalRaised() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

[[noreturn]] void Raise(const HttpFailure& failure, const std::string& what) {
  if (failure.ec == boost::asio::error::operation_aborted && PyErr_Occurred()) {
    throw py::error_already_set();
  }
  PyObject* type = http_error;
  if (failure.ec == boost::asio::error::timed_out) {
    type = failure.connecting ? connect_timeout : read_timeout;
  }
  const std::string phase = failure.connecting ? "connecting to " : "GET ";
  PyErr_SetString(type, (phase + what + ": " + failure.ec.message()).c_str());
  throw py::error_already_set();
}

// GET `target` from host:port -> (status, body, fields). body: bytes when the reply has a
// Content-Length and no content coding (at most 64 KiB unless the status is 2xx), else None.
// fields: the header fields as (name, value) pairs unless the status is 2xx, then None.
// Timeouts are seconds per wait, None for no limit.
py::tuple Get(HttpClient& client, const std::string& host, uint16_t port,
              const std::string& target, const HttpHeaders& headers,
              std::optional<double> connect, std::optional<double> read) {
  const HttpTimeouts timeouts{connect.value_or(-1), read.value_or(-1)};
  const std::string what = "http://" + host + ":" + std::to_string(port) + target;
  HttpFailure failure;
  std::unique_ptr<HttpExchange> ex;
  {
    py::gil_scoped_release release;
    ex = client.Get(host, port, target, headers, timeouts, SignalRaised, failure);
  }
  if (ex == nullptr) Raise(failure, what);
  const HttpReplyHead& head = ex->head();
  const bool success = head.status >= 200 && head.status < 300;
  const bool readable = head.has_length && !head.encoded;
  py::object body = py::none();
  if (readable && (success || head.length <= HttpExchange::kMaxDiscard)) {
    PyObject* bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(head.length));
    if (bytes == nullptr) throw py::error_already_set();
    body = py::reinterpret_steal<py::object>(bytes);
    error_code ec;
    {
      // Nobody else can see `bytes` yet, so filling it unlocked is safe.
      py::gil_scoped_release release;
      ec = ex->ReadBody(PyBytes_AS_STRING(bytes));
    }
    if (ec) Raise(HttpFailure{ec, false}, what);
  } else {
    py::gil_scoped_release release;
    ex->Discard();
  }
  py::object fields = py::none();
  if (!success) fields = py::cast(head.fields);
  {
    py::gil_scoped_release release;  // may close a socket
    ex.reset();
  }
  return py::make_tuple(head.status, body, fields);
}

}  // namespace

void AddHttpClientTypes(py::module_& m) {
  http_error = PyErr_NewExceptionWithDoc("aistore._native.HttpError",
                                         "A GET failed below HTTP: connection, protocol, I/O.",
                                         PyExc_OSError, nullptr);
  if (http_error == nullptr) throw py::error_already_set();
  m.add_object("HttpError", py::reinterpret_borrow<py::object>(http_error));
  connect_timeout = PyErr_NewExceptionWithDoc("aistore._native.ConnectTimeout",
                                              "No connection within the connect timeout.",
                                              http_error, nullptr);
  if (connect_timeout == nullptr) throw py::error_already_set();
  m.add_object("ConnectTimeout", py::reinterpret_borrow<py::object>(connect_timeout));
  read_timeout = PyErr_NewExceptionWithDoc("aistore._native.ReadTimeout",
                                           "No byte of the reply within the read timeout.",
                                           http_error, nullptr);
  if (read_timeout == nullptr) throw py::error_already_set();
  m.add_object("ReadTimeout", py::reinterpret_borrow<py::object>(read_timeout));

  py::class_<HttpClient>(m, "HttpClient",
                         "Keep-alive HTTP/1.1 GETs; one per process (not fork-safe).")
      .def(py::init<size_t>(), py::arg("max_idle_per_host") = 32)
      .def("get", &Get, py::arg("host"), py::arg("port"), py::arg("target"), py::arg("headers"),
           py::arg("connect_timeout") = py::none(), py::arg("read_timeout") = py::none(),
           "GET target from host:port -> (status, body bytes | None, header fields | None).");
}

}  // namespace aisnative
