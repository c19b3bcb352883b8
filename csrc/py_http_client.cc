#include "py_http_client.h"

#include <pybind11/stl.h>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "http_client.h"
#include "prefault.h"
#include "py_byte_source.h"

namespace py = pybind11;

namespace aisnative {
namespace {

PyObject* http_error = nullptr;         // HttpError(OSError); owned by the module
PyObject* connect_timeout = nullptr;    // ConnectTimeout(HttpError)
PyObject* read_timeout = nullptr;       // ReadTimeout(HttpError)
PyObject* connection_failed = nullptr;  // ConnectionFailed(HttpError)

// An error reply's body is read (for its message) up to this size.
constexpr uint64_t kMaxErrorBody = 64 << 10;

// Run while a wait goes on with the GIL released: lets Python's signal handlers run, so Ctrl-C
// stops a request that waits for a silent server. A raised exception stays set for the caller.
bool SignalRaised() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

// A reply Beast could not parse, as opposed to a connection that failed or broke off.
bool IsProtocolError(const error_code& ec) {
  namespace http = boost::beast::http;
  return ec.category() == http::make_error_code(http::error::bad_version).category() &&
         ec != http::error::partial_message && ec != http::error::end_of_stream;
}

// Sets the Python error for `failure` (keeps one already set by a signal handler).
void SetError(const HttpFailure& failure, const std::string& what) {
  if (failure.ec == boost::asio::error::operation_aborted && PyErr_Occurred()) return;
  PyObject* type = connection_failed;
  if (failure.ec == boost::asio::error::timed_out) {
    type = failure.connecting ? connect_timeout : read_timeout;
  } else if (IsProtocolError(failure.ec)) {
    type = http_error;
  }
  const std::string phase = failure.connecting ? "connecting for " : "";
  PyErr_SetString(type, (phase + what + ": " + failure.ec.message()).c_str());
}

[[noreturn]] void Raise(const HttpFailure& failure, const std::string& what) {
  SetError(failure, what);
  throw py::error_already_set();
}

HttpTimeouts Timeouts(std::optional<double> connect, std::optional<double> read) {
  return HttpTimeouts{connect.value_or(-1), read.value_or(-1)};
}

// HttpResponse: a reply whose body is read as it arrives (readinto), for streams of unknown
// length such as GetBatch archives and for range reads. One thread at a time: a call that finds
// another one still running (with the GIL released) raises instead of racing it. Abort is the
// exception: any thread may call it, to wake a reader blocked in readinto.
class HttpResponse {
 public:
  HttpResponse(std::unique_ptr<HttpExchange> ex, std::string what)
      : ex_(std::move(ex)), what_(std::move(what)) {}

  unsigned status() const { return ex_ ? ex_->head().status : 0; }
  py::list fields() const {
    py::list out;
    if (ex_) {
      for (const auto& [name, value] : ex_->head().fields) out.append(py::make_tuple(name, value));
    }
    return out;
  }

  size_t ReadInto(py::buffer buffer) {
    py::buffer_info info = buffer.request(/*writable=*/true);
    if (!PyBuffer_IsContiguous(reinterpret_cast<Py_buffer*>(info.view()), 'C')) {
      throw py::value_error("readinto needs a C-contiguous buffer");
    }
    Claim();
    size_t n = 0;
    error_code ec;
    {
      py::gil_scoped_release release;
      n = ex_->ReadSome(static_cast<char*>(info.ptr),
                        static_cast<size_t>(info.size * info.itemsize), ec);
    }
    busy_ = false;
    if (ec) {
      Close();
      Raise(HttpFailure{ec, false}, what_);
    }
    return n;
  }

  // For a reader in C++ (HttpResponseSource): up to `size` body bytes into `dest`, 0 at the
  // end; on failure `ec` is set and the exchange closed. Callable without the GIL; a call that
  // finds another read running fails with `device_or_resource_busy`.
  size_t ReadNative(char* dest, size_t size, error_code& ec) {
    if (busy_.exchange(true)) {
      ec = boost::system::errc::make_error_code(boost::system::errc::device_or_resource_busy);
      return 0;
    }
    size_t n = 0;
    if (ex_ == nullptr) {
      ec = boost::asio::error::not_connected;
    } else {
      n = ex_->ReadSome(dest, size, ec);
      if (ec) {
        std::lock_guard<std::mutex> lock(abort_mu_);
        ex_.reset();
      }
    }
    busy_ = false;
    return n;
  }

  const std::string& what() const { return what_; }

  // Ends the exchange: up to `drain` bytes left of the body are read so that the connection
  // serves again; more, and it is closed.
  void Close(uint64_t drain = 0) {
    if (ex_ == nullptr) return;
    Claim();
    {
      py::gil_scoped_release release;
      ex_->Discard(drain);
      std::lock_guard<std::mutex> lock(abort_mu_);
      ex_.reset();
    }
    busy_ = false;
  }

  // Shuts the connection down: a readinto blocked in another thread fails at once, and the
  // connection is closed, never pooled. A no-op once closed, so it can never reach a connection
  // that went back to the pool and serves another request.
  void Abort() {
    std::lock_guard<std::mutex> lock(abort_mu_);
    if (ex_ != nullptr) ex_->Abort();
  }

 private:
  void Claim() {
    if (busy_.exchange(true)) throw py::value_error("HttpResponse: another thread is reading it");
    if (ex_ == nullptr) {
      busy_ = false;
      throw py::value_error("HttpResponse: closed");
    }
  }

  // Reset only under abort_mu_ (Abort runs beside a reader); read freely by the claimant.
  std::unique_ptr<HttpExchange> ex_;
  std::mutex abort_mu_;
  const std::string what_;
  std::atomic<bool> busy_{false};  // a call reads (Python's, or a C++ source's without the GIL)
};

// A ByteSource over an HttpResponse: its body read straight into a buffer it owns, with no
// Python call per block. Holds a reference to the response object.
class HttpResponseSource : public PySource {
 public:
  HttpResponseSource(py::object owner, size_t buffer_size)
      : owner_(std::move(owner)),
        response_(owner_.cast<HttpResponse*>()),
        buffer_(new char[buffer_size]),
        size_(buffer_size) {}

  // Reads with the GIL released (taken back before returning when the caller held it).
  ssize_t Next(const void** block) override {
    *block = buffer_.get();
    error_code ec;
    size_t n = 0;
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      n = response_->ReadNative(buffer_.get(), size_, ec);
    } else {
      n = response_->ReadNative(buffer_.get(), size_, ec);
    }
    if (ec) {
      ec_ = ec;
      return -1;
    }
    return static_cast<ssize_t>(n);
  }

  bool RestoreError() override {
    if (!ec_) return false;
    SetError(HttpFailure{ec_, false}, response_->what());
    ec_ = {};
    return PyErr_Occurred() != nullptr;
  }

 private:
  const py::object owner_;  // keeps *response_ alive; released with the GIL (by the reader)
  HttpResponse* const response_;
  const std::unique_ptr<char[]> buffer_;
  const size_t size_;
  error_code ec_;  // of the failed Next, until RestoreError
};

// GET `target` from host:port -> (status, body, fields). body: the whole body as bytes when
// the reply has a Content-Length, no content coding and is 2xx or at most 64 KiB; otherwise
// the reply itself, an HttpResponse with its head read, for the caller to read as a stream.
// fields: the header fields as (name, value) pairs unless the status is 2xx, then None.
// Timeouts are seconds per wait, None for no limit.
py::tuple Get(const py::object& self, const std::string& host, uint16_t port,
              const std::string& target, const HttpHeaders& headers,
              std::optional<double> connect, std::optional<double> read) {
  HttpClient& client = self.cast<HttpClient&>();
  std::string what = "GET http://" + host + ":" + std::to_string(port) + target;
  HttpFailure failure;
  std::unique_ptr<HttpExchange> ex;
  {
    py::gil_scoped_release release;
    ex = client.Send(host, port, "GET", target, headers, {}, true, Timeouts(connect, read),
                     SignalRaised, failure);
  }
  if (ex == nullptr) Raise(failure, what);
  const HttpReplyHead& head = ex->head();
  const unsigned status = head.status;
  const bool success = status >= 200 && status < 300;
  py::object fields = py::none();
  if (!success) fields = py::cast(head.fields);
  const bool readable = head.has_length && !head.encoded;
  if (!readable || (!success && head.length > kMaxErrorBody)) {
    py::object stream = py::cast(std::make_unique<HttpResponse>(std::move(ex), std::move(what)));
    // The response returns its connection to the client's pool: keep the client alive.
    py::detail::keep_alive_impl(stream, self);
    return py::make_tuple(status, stream, fields);
  }
  PyObject* bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(head.length));
  if (bytes == nullptr) throw py::error_already_set();
  py::object body = py::reinterpret_steal<py::object>(bytes);
  error_code ec;
  {
    // Nobody else can see `bytes` yet, so filling it unlocked is safe.
    py::gil_scoped_release release;
    Prefaulter prefault(PyBytes_AS_STRING(bytes), static_cast<size_t>(head.length));
    ec = ex->ReadBody(PyBytes_AS_STRING(bytes));
  }
  if (ec) Raise(HttpFailure{ec, false}, what);
  {
    py::gil_scoped_release release;  // may read a small body to keep the connection, or close it
    ex->Discard(kMaxErrorBody);
    ex.reset();
  }
  return py::make_tuple(status, body, fields);
}

// Sends `method target` with `body`, the GIL released, and returns the reply once its head is
// read; a transport failure is raised as the native error types.
std::unique_ptr<HttpResponse> Send(HttpClient& client, const std::string& host, uint16_t port,
                                   const std::string& method, const std::string& target,
                                   const HttpHeaders& headers, const HttpBody& body,
                                   std::optional<double> connect, std::optional<double> read) {
  const std::string what = method + " http://" + host + ":" + std::to_string(port) + target;
  HttpFailure failure;
  std::unique_ptr<HttpExchange> ex;
  {
    py::gil_scoped_release release;
    ex = client.Send(host, port, method, target, headers, body, true, Timeouts(connect, read),
                     SignalRaised, failure);
  }
  if (ex == nullptr) Raise(failure, what);
  return std::make_unique<HttpResponse>(std::move(ex), what);
}

// Sends `method target` with `body` (any contiguous buffer: bytes, bytearray, memoryview,
// numpy array; sent from where it is) and returns the reply once its head is read.
std::unique_ptr<HttpResponse> Open(HttpClient& client, const std::string& host, uint16_t port,
                                   const std::string& method, const std::string& target,
                                   const HttpHeaders& headers, const py::buffer& body,
                                   std::optional<double> connect, std::optional<double> read) {
  // The view pins the buffer (a bytearray cannot be resized while it is held) until it is
  // released, after the send; PyBUF_SIMPLE refuses a non-contiguous one.
  Py_buffer view;
  if (PyObject_GetBuffer(body.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> held(&view, PyBuffer_Release);
  HttpBody payload{.bytes = std::string_view(static_cast<const char*>(view.buf), static_cast<size_t>(view.len))};
  return Send(client, host, port, method, target, headers, payload, connect, read);
}

// As Open, with `length` bytes of the open file `fd` from `offset` as the body (sendfile).
std::unique_ptr<HttpResponse> OpenFile(HttpClient& client, const std::string& host, uint16_t port,
                                       const std::string& method, const std::string& target,
                                       const HttpHeaders& headers, int fd, uint64_t offset,
                                       uint64_t length, std::optional<double> connect,
                                       std::optional<double> read) {
  if (fd < 0) throw py::value_error("open_file: fd must be an open file descriptor");
  HttpBody body{.fd = fd, .offset = offset, .length = length};
  return Send(client, host, port, method, target, headers, body, connect, read);
}

}  // namespace

PySource* NewHttpResponseSource(PyObject* obj, size_t buffer_size) {
  py::handle handle(obj);
  if (!py::isinstance<HttpResponse>(handle)) return nullptr;
  return new HttpResponseSource(py::reinterpret_borrow<py::object>(handle), buffer_size);
}

void AddHttpClientTypes(py::module_& m) {
  http_error = PyErr_NewExceptionWithDoc("aistore._native.HttpError",
                                         "A request failed below HTTP: a reply that cannot be parsed (subclasses: the rest).",
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
  connection_failed = PyErr_NewExceptionWithDoc(
      "aistore._native.ConnectionFailed",
      "The connection could not be made, or broke off before the reply's end.", http_error,
      nullptr);
  if (connection_failed == nullptr) throw py::error_already_set();
  m.add_object("ConnectionFailed", py::reinterpret_borrow<py::object>(connection_failed));

  py::class_<HttpResponse>(m, "HttpResponse",
                           "A reply whose body is read as it arrives; close() ends it.")
      .def_property_readonly("status", &HttpResponse::status)
      .def_property_readonly("fields", &HttpResponse::fields, "Header fields, (name, value).")
      .def("readinto", &HttpResponse::ReadInto, py::arg("buffer"),
           "Body bytes into buffer, GIL released; 0 at the end of the body.")
      .def("close", &HttpResponse::Close, py::arg("drain") = 0,
           "End the reply; reads up to drain bytes left so the connection is kept.")
      .def("abort", &HttpResponse::Abort,
           "From any thread: wake a blocked readinto (it fails); the connection is dropped.");

  py::class_<HttpClient>(m, "HttpClient",
                         "Keep-alive HTTP/1.1 requests; one per process (not fork-safe).")
      .def(py::init<size_t>(), py::arg("min_idle_per_host") = 10,
           "Idle connections kept per host: as many as were in use at once (up to 256), and at "
           "least min_idle_per_host.")
      .def("keep_idle_at_least", &HttpClient::KeepIdleAtLeast, py::arg("n"),
           "Keep at least n idle connections per host from now on (never lowers the floor).")
      .def("get", &Get, py::arg("host"), py::arg("port"), py::arg("target"), py::arg("headers"),
           py::arg("connect_timeout") = py::none(), py::arg("read_timeout") = py::none(),
           "GET target from host:port -> (status, body bytes | HttpResponse, header fields | None).")
      .def("open", &Open, py::arg("host"), py::arg("port"), py::arg("method"), py::arg("target"),
           py::arg("headers"), py::arg("body"), py::arg("connect_timeout") = py::none(),
           py::arg("read_timeout") = py::none(),
           // The response returns its connection to the client's pool: keep the client alive.
           py::keep_alive<0, 1>(),
           "Send a request with body (a contiguous buffer); the HttpResponse streams its reply.")
      .def("open_file", &OpenFile, py::arg("host"), py::arg("port"), py::arg("method"),
           py::arg("target"), py::arg("headers"), py::arg("fd"), py::arg("offset"),
           py::arg("length"), py::arg("connect_timeout") = py::none(),
           py::arg("read_timeout") = py::none(), py::keep_alive<0, 1>(),
           "Send a request whose body is length bytes of file descriptor fd from offset (sent "
           "with sendfile; the file's position is not moved).");
}

}  // namespace aisnative
