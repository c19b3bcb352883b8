// Request: one S3 request as the S3 handlers see it (internal to s3/).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "service/context.h"
#include "s3/errors.h"
#include "s3/sigv4.h"
#include "s3/xml.h"

namespace ais::s3 {

struct Request {
  Request(ServerContext& c, Exchange& e) : ctx(c), ex(e) {}
  ServerContext& ctx;
  Exchange& ex;
  std::string bucket_name;  // as in the path (decoded)
  std::string key;          // the object key, path-cleaned; "" for bucket and service requests
  std::string bucket;       // the store key (store/bck.h), once the bucket is resolved
  Scope scope = Scope::kService;
  std::string request_id;
  // The S3 code of the Status a handler returns, when the Status's kind does not tell it.
  std::string error_code;
  HeaderList error_headers;  // headers the error reply carries (Content-Range of a 416)
  // The verified SigV4 signature, when the server checks them (its chunk signatures follow).
  std::optional<SigV4Context> sigv4;

  bool has(std::string_view param) const { return ex.query(param).has_value(); }
  std::string param(std::string_view name) const { return ex.query(name).value_or(""); }
  // Fails with S3 code `code`: `co_return r.Fail("MalformedXML", st);`.
  Status Fail(std::string code, Status st) {
    error_code = std::move(code);
    return st;
  }
};

// A 200 with the XML document and the request id (every S3 reply that has a body).
Task<Handled> ReplyXml(Request& r, const XmlDoc& doc);

// Request body limits: XML documents are small; a body over its limit is a 400.
inline constexpr size_t kMaxXmlBody = 1 << 20;             // Delete (1000 keys), versioning, create-bucket
inline constexpr size_t kMaxCompleteBody = 10000 * 1024;   // CompleteMultipartUpload of 10 000 parts

// x-amz-copy-source of CopyObject and UploadPartCopy: "[/]bucket/key[?versionId=...]", URL-encoded.
struct CopySource {
  std::string bucket_name;
  std::string key;
};
// The header's value decoded and split (kInvalidArgument naming what is wrong). The access check
// and the handlers all read the source through it, so they agree on the bucket.
Result<CopySource> SplitCopySource(std::string_view header);
// The request's source, or its S3 error (InvalidArgument).
Result<CopySource> ParseCopySource(Request& r);
// The store key of the bucket S3 calls `name`: ais://name, else s3://name if the server knows it
// (the S3 API adds no remote bucket); both: AmbiguousBucketName, neither: NoSuchBucket.
Result<std::string> BucketByName(Request& r, const std::string& name);

Task<Handled> ListBuckets(Request& r);
Task<Handled> CreateBucket(Request& r);
Task<Handled> DeleteBucket(Request& r);
Task<Handled> HeadBucket(Request& r);
Task<Handled> GetBucketLocation(Request& r);
Task<Handled> GetBucketVersioning(Request& r);
Task<Handled> PutBucketVersioning(Request& r);
Task<Handled> ListObjects(Request& r);
Task<Handled> DeleteObjects(Request& r);

Task<Handled> GetObject(Request& r);
Task<Handled> HeadObject(Request& r);
Task<Handled> PutObject(Request& r);
Task<Handled> CopyObject(Request& r);
Task<Handled> DeleteObject(Request& r);

Task<Handled> CreateMultipartUpload(Request& r);
Task<Handled> UploadPart(Request& r);
Task<Handled> UploadPartCopy(Request& r);
Task<Handled> CompleteMultipartUpload(Request& r);
Task<Handled> AbortMultipartUpload(Request& r);
Task<Handled> ListParts(Request& r);
Task<Handled> ListMultipartUploads(Request& r);

}  // namespace ais::s3
