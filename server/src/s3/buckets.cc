// S3 bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket, GetBucketLocation,
// Get/PutBucketVersioning, DeleteObjects.
#include <set>

#include "service/remote.h"
#include "s3/object_attrs.h"
#include "s3/request.h"
#include "s3/xml.h"
#include "store/bck.h"
#include "store/names.h"
#include "util/log_ring.h"

namespace ais::s3 {
namespace {

Task<Handled> ReplyEmpty(Request& r, http::status status = http::status::ok) {
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  co_return co_await r.ex.Reply(status, headers);
}

// Reads (bounded) and drops a body this operation does not use (CreateBucketConfiguration).
Task<Status> DropBody(Request& r) {
  auto body = co_await r.ex.ReadBody(kMaxXmlBody);
  co_return body.status();
}

}  // namespace

Task<Handled> ListBuckets(Request& r) {
  XmlDoc doc("ListAllMyBucketsResult");
  pugi::xml_node owner = doc.root().append_child("Owner");
  AddText(owner, "ID", "1");
  AddText(owner, "DisplayName", "aistore");
  pugi::xml_node buckets = doc.root().append_child("Buckets");
  std::set<std::string> seen;  // a name in two providers is one S3 bucket name
  for (const std::string& key : r.ctx.store.buckets().Names()) {
    // system buckets (inventories); a namespace's (S3 names buckets of the global one only)
    if (key.starts_with('.') || !KeyNs(key).global()) continue;
    std::string name(KeyName(key));
    if (!seen.insert(name).second) continue;
    auto props = r.ctx.store.buckets().Get(key);
    pugi::xml_node b = buckets.append_child("Bucket");
    AddText(b, "Name", name);
    AddText(b, "CreationDate", Iso8601(props ? props->created_ns : 0));
  }
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> CreateBucket(Request& r) {
  if (Status st = ValidateBucketName(r.bucket_name); !st.ok()) co_return r.Fail("InvalidBucketName", st);
  if (Status st = co_await DropBody(r); !st.ok()) co_return st;
  for (const std::string& key : {r.bucket_name, BucketKey(kProviderAws, r.bucket_name)}) {
    if (r.ctx.store.buckets().Get(key)) {
      co_return Status::AlreadyExists("cannot create bucket \"" + r.bucket_name + "\": name already in use by " +
                                      BucketCname(key));
    }
  }
  Status st = r.ctx.store.CreateBucket(r.bucket_name, nlohmann::json());
  if (!st.ok()) co_return st;
  LogInfo("created bucket " + BucketCname(r.bucket_name) + " (S3 API)");
  HeaderList headers = {{"x-amz-request-id", r.request_id}, {"Location", "/" + r.bucket_name}};
  co_return co_await r.ex.Reply(http::status::ok, headers);
}

Task<Handled> DeleteBucket(Request& r) {
  if (IsRemoteKey(r.bucket)) {
    co_return r.Fail("NotImplemented", Status::NotSupported("deleting " + BucketCname(r.bucket) +
                                                            " through the S3 API is not supported (evict it with the AIS API)"));
  }
  auto any = r.ctx.store.List(r.bucket, ListQuery{.prefix = "", .after = "", .limit = 1});
  if (!any.ok()) co_return any.status();
  if (!any->empty()) {
    co_return r.Fail("BucketNotEmpty", Status::Conflict("the bucket you tried to delete is not empty"));
  }
  Status st = r.ctx.inventory.Destroy(r.bucket, "");  // a bucket's inventories go with it
  if (st.ok()) st = r.ctx.store.DestroyBucket(r.bucket);
  if (!st.ok()) co_return st;
  LogInfo("destroyed bucket " + BucketCname(r.bucket) + " (S3 API)");
  co_return co_await ReplyEmpty(r, http::status::no_content);
}

Task<Handled> HeadBucket(Request& r) {
  HeaderList headers = {{"x-amz-request-id", r.request_id}, {"x-amz-bucket-region", "us-east-1"}, {"Server", "AIStore"}};
  co_return co_await r.ex.Reply(http::status::ok, headers);
}

Task<Handled> GetBucketLocation(Request& r) {
  XmlDoc doc("LocationConstraint");  // empty: us-east-1
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> GetBucketVersioning(Request& r) {
  auto props = r.ctx.store.GetBucket(r.bucket);
  if (!props.ok()) co_return props.status();
  XmlDoc doc("VersioningConfiguration");
  AddText(doc.root(), "Status", props->versioning ? "Enabled" : "Suspended");
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> PutBucketVersioning(Request& r) {
  auto body = co_await r.ex.ReadBody(kMaxXmlBody);
  if (!body.ok()) co_return body.status();
  auto status = ParseVersioningRequest(*body);
  if (!status.ok()) co_return r.Fail("MalformedXML", status.status());
  nlohmann::json patch = {{"versioning", {{"enabled", *status == "Enabled"}}}};
  Status st = r.ctx.store.UpdateBucket(r.bucket, patch);
  if (!st.ok()) co_return st;
  co_return co_await ReplyEmpty(r);
}

Task<Handled> DeleteObjects(Request& r) {
  auto body = co_await r.ex.ReadBody(kMaxXmlBody);
  if (!body.ok()) co_return body.status();
  auto req = ParseDeleteRequest(*body);
  if (!req.ok()) co_return r.Fail("MalformedXML", req.status());
  XmlDoc doc("DeleteResult");
  // Synchronous, one key at a time: the reply tells each key's outcome. A key that is not there
  // counts as deleted (S3: the outcome a delete asks for).
  for (const std::string& key : req->keys) {
    Status st = ValidateObjectName(key);
    if (st.ok() && IsRemoteKey(r.bucket)) {
      st = co_await DeleteThrough(r.ctx, r.bucket, key);  // in S3 first, then the cached copy
    } else if (st.ok()) {
      st = r.ctx.store.Delete(r.bucket, key);
    }
    if (st.ok() || st.code() == Status::Code::kNotFound) {
      if (!req->quiet) AddText(doc.root().append_child("Deleted"), "Key", key);
      continue;
    }
    S3Error e = ToS3Error(st, Scope::kObject);
    pugi::xml_node err = doc.root().append_child("Error");
    AddText(err, "Key", key);
    AddText(err, "Code", e.code);
    AddText(err, "Message", e.message);
  }
  co_return co_await ReplyXml(r, doc);
}

}  // namespace ais::s3
