// Status: the one error type of the server. Returned, never thrown.
// The code is the error's kind: the router maps it to an HTTP status and AIS error JSON in one
// place (Dispatch in router/router.cc, through Exchange::ReplyError). Nothing decides anything
// from the message text, which is for people.
#pragma once

#include <string>
#include <utility>

namespace ais {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,   // 400
    kUnauthorized,      // 401
    kForbidden,         // 403
    kNotFound,          // 404
    kBucketNotFound,    // 404, AIS ErrBckNotFound (the error JSON names it in "tcode")
    kMethodNotAllowed,  // 405
    kAlreadyExists,     // 409
    kConflict,          // 409
    kGone,              // 410
    kPreconditionFailed,  // 412
    kRangeNotSatisfiable,  // 416
    kTooManyRequests,   // 429: overloaded, the client should retry later
    kIOError,           // 500
    kCorruption,        // 500
    kNotSupported,      // 501
    kUnavailable,       // 503: a backend is overloaded or down; retry later
    kNoSpace,           // 507
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unauthorized(std::string m) { return {Code::kUnauthorized, std::move(m)}; }
  static Status Forbidden(std::string m) { return {Code::kForbidden, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status BucketNotFound(std::string m) { return {Code::kBucketNotFound, std::move(m)}; }
  static Status MethodNotAllowed(std::string m) { return {Code::kMethodNotAllowed, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  static Status Gone(std::string m) { return {Code::kGone, std::move(m)}; }
  static Status PreconditionFailed(std::string m) { return {Code::kPreconditionFailed, std::move(m)}; }
  static Status RangeNotSatisfiable(std::string m) { return {Code::kRangeNotSatisfiable, std::move(m)}; }
  static Status TooManyRequests(std::string m) { return {Code::kTooManyRequests, std::move(m)}; }
  static Status IOError(std::string m) { return {Code::kIOError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status NotSupported(std::string m) { return {Code::kNotSupported, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status NoSpace(std::string m) { return {Code::kNoSpace, std::move(m)}; }
  // An errno from a syscall: ENOSPC/EDQUOT become kNoSpace, ENOENT kNotFound, the rest kIOError.
  static Status FromErrno(int err, const std::string& context);

  bool ok() const { return code_ == Code::kOk; }
  // Any 404 kind: an object, a bucket, a job, a path.
  bool IsNotFound() const { return code_ == Code::kNotFound || code_ == Code::kBucketNotFound; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Result<T>: a value or a Status (C++20 has no std::expected).
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status s) : status_(std::move(s)) {}    // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }
  const T& value() const { return value_; }
  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  Status status_;
  T value_{};
};

}  // namespace ais

#define AIS_RETURN_IF_ERROR(expr)      \
  do {                                 \
    ::ais::Status _st = (expr);        \
    if (!_st.ok()) return _st;         \
  } while (0)
