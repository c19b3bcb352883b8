// S3 errors: which S3 code and HTTP status a failure is, and the XML `Error` document.
//
// A handler of the S3 front end fails with a Status, as every handler does. Its S3 code comes
// from the Status's kind and what the request addressed (a missing object is NoSuchKey, a missing
// upload NoSuchUpload), unless the handler names the code itself (S3Failure): S3 has codes the
// native kinds do not tell apart (MalformedXML, BadDigest, InvalidPart, BucketNotEmpty, ...).
#pragma once

#include <string>
#include <string_view>

#include "http/asio.h"
#include "util/status.h"

namespace ais::s3 {

// What a request addresses, for the codes of "not found".
enum class Scope { kService, kBucket, kObject, kUpload };

struct S3Error {
  http::status status = http::status::internal_server_error;
  std::string code;
  std::string message;
};

// `code`: the handler's explicit S3 code, or empty to derive it from the Status.
S3Error ToS3Error(const Status& st, Scope scope, std::string_view code = {});

// <Error><Code/><Message/><Resource/><RequestId/></Error>.
std::string ErrorXml(const S3Error& e, std::string_view resource, std::string_view request_id);

}  // namespace ais::s3
