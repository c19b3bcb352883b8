#include "s3/errors.h"

#include "s3/xml.h"

namespace ais::s3 {

S3Error ToS3Error(const Status& st, Scope scope, std::string_view code) {
  using C = Status::Code;
  S3Error e;
  e.message = st.message();
  switch (st.code()) {
    case C::kOk:
    case C::kIOError:
    case C::kCorruption: e = {http::status::internal_server_error, "InternalError", st.message()}; break;
    case C::kInvalidArgument: e = {http::status::bad_request, "InvalidArgument", st.message()}; break;
    case C::kUnauthorized:
    case C::kForbidden: e = {http::status::forbidden, "AccessDenied", st.message()}; break;
    case C::kBucketNotFound: e = {http::status::not_found, "NoSuchBucket", st.message()}; break;
    case C::kNotFound:
    case C::kGone: {
      const char* c = scope == Scope::kUpload ? "NoSuchUpload" : scope == Scope::kObject ? "NoSuchKey" : "NoSuchBucket";
      e = {http::status::not_found, c, st.message()};
      break;
    }
    case C::kMethodNotAllowed: e = {http::status::method_not_allowed, "MethodNotAllowed", st.message()}; break;
    case C::kAlreadyExists: e = {http::status::conflict, "BucketAlreadyExists", st.message()}; break;
    case C::kConflict: e = {http::status::conflict, "OperationAborted", st.message()}; break;
    case C::kPreconditionFailed: e = {http::status::precondition_failed, "PreconditionFailed", st.message()}; break;
    case C::kRangeNotSatisfiable: e = {http::status::range_not_satisfiable, "InvalidRange", st.message()}; break;
    case C::kTooManyRequests: e = {http::status::service_unavailable, "SlowDown", st.message()}; break;
    case C::kNotSupported: e = {http::status::not_implemented, "NotImplemented", st.message()}; break;
    case C::kUnavailable: e = {http::status::service_unavailable, "ServiceUnavailable", st.message()}; break;
    case C::kNoSpace: e = {http::status::insufficient_storage, "InsufficientStorage", st.message()}; break;
  }
  if (!code.empty()) e.code = std::string(code);
  return e;
}

std::string ErrorXml(const S3Error& e, std::string_view resource, std::string_view request_id) {
  XmlDoc doc("Error", /*ns=*/false);
  AddText(doc.root(), "Code", e.code);
  AddText(doc.root(), "Message", e.message);
  AddText(doc.root(), "Resource", resource);
  AddText(doc.root(), "RequestId", request_id);
  return doc.Text();
}

}  // namespace ais::s3
