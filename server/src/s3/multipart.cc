// S3 multipart upload over the store's one MPU engine (Store::Mpu*, also behind the AIS API's
// mpt-* actions): parts are written straight into chunk files of the final object, each tagged
// with its MD5 (its ETag); Complete checks the listed parts and commits the chunked object at
// one rename. Nothing is visible before Complete; Abort leaves nothing.
#include <algorithm>
#include <memory>

#include "service/object_read.h"
#include "service/offload.h"
#include "service/remote.h"
#include "s3/body.h"
#include "s3/object_attrs.h"
#include "s3/request.h"
#include "s3/xml.h"
#include "store/bck.h"
#include "store/bucket_props.h"
#include "store/names.h"
#include "util/strings.h"

namespace ais::s3 {
namespace {

constexpr uint64_t kMaxParts = kMaxChunks;  // 9999: the store's chunk limit (S3's is 10 000)

Result<uint32_t> PartNumber(Request& r) {
  std::string s = r.param("partNumber");
  auto n = ParseUint(s);
  if (!n || *n < 1 || *n > kMaxParts) {
    return r.Fail("InvalidArgument", Status::InvalidArgument("part number must be an integer between 1 and " +
                                                             std::to_string(kMaxParts) + ", got \"" + s.substr(0, 16) + "\""));
  }
  return static_cast<uint32_t>(*n);
}

}  // namespace

Task<Handled> CreateMultipartUpload(Request& r) {
  auto md = UserMetadata(r.ex);
  if (!md.ok()) co_return r.Fail("MetadataTooLarge", md.status());
  auto id = r.ctx.store.MpuCreate(r.bucket, r.key, std::move(*md));
  if (!id.ok()) co_return id.status();
  XmlDoc doc("InitiateMultipartUploadResult");
  AddText(doc.root(), "Bucket", r.bucket_name);
  AddText(doc.root(), "Key", r.key);
  AddText(doc.root(), "UploadId", *id);
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> UploadPart(Request& r) {
  auto num = PartNumber(r);
  if (!num.ok()) co_return num.status();
  auto size = BodySize(r);
  if (!size.ok()) co_return size.status();
  if (!*size) co_return r.Fail("MissingContentLength", Status::InvalidArgument("a part needs its length (Content-Length)"));
  auto w = r.ctx.store.MpuPart(r.bucket, r.key, r.param("uploadId"), *num, **size);
  if (!w.ok()) co_return w.status();
  PartWriter& writer = **w;
  std::function<Status(const char*, size_t)> sink = [&writer](const char* p, size_t n) { return writer.Write(p, n); };
  auto got = co_await ReceiveBody(r, sink);
  if (!got.ok()) co_return got.status();
  if (Status st = writer.Commit(got->md5_hex); !st.ok()) co_return st;
  HeaderList headers = {{"x-amz-request-id", r.request_id}, {"ETag", "\"" + got->md5_hex + "\""}};
  if (got->algo) headers.emplace_back(std::string(kChecksumKeyPrefix) + std::string(ChecksumName(*got->algo)), got->checksum);
  co_return co_await r.ex.Reply(http::status::ok, headers);
}

Task<Handled> UploadPartCopy(Request& r) {
  auto num = PartNumber(r);
  if (!num.ok()) co_return num.status();
  auto src = ParseCopySource(r);
  if (!src.ok()) co_return src.status();
  auto src_bucket = BucketByName(r, src->bucket_name);
  if (!src_bucket.ok()) co_return src_bucket.status();
  if (IsRemoteKey(*src_bucket)) {
    if (Status st = co_await EnsureCached(r.ctx, r.ex, *src_bucket, src->key); !st.ok()) co_return st;
  }
  std::string_view range = r.ex.header("x-amz-copy-source-range");
  std::function<Status(const ObjectMeta&)> check = [&](const ObjectMeta& m) {
    return CheckConditions(r.ex, m, /*copy_source=*/true) == Condition::kPass
               ? Status::OK()
               : Status::PreconditionFailed("at least one of the preconditions you specified did not hold");
  };
  r.scope = Scope::kObject;
  auto rd = OpenObjectRead(r.ctx, *src_bucket, src->key, range, &check, nullptr);
  if (!rd.ok()) {
    if (rd.status().code() == Status::Code::kRangeNotSatisfiable) co_return r.Fail("InvalidArgument", Status::InvalidArgument(
        "x-amz-copy-source-range \"" + std::string(range.substr(0, 64)) + "\" is not valid for the source object"));
    co_return rd.status();
  }
  if (rd->length == 0) co_return r.Fail("InvalidArgument", Status::InvalidArgument("the source range is empty"));
  r.scope = Scope::kUpload;
  auto w = r.ctx.store.MpuPart(r.bucket, r.key, r.param("uploadId"), *num, rd->length);
  if (!w.ok()) co_return w.status();
  auto md5 = BodyHasher::Md5();
  std::vector<char> buf(1 << 20);
  Status st = StreamSegments(rd->segments, buf, [&](const char* p, size_t n) {
    md5->Update(p, n);
    return (*w)->Write(p, n);
  });
  const std::string etag = HexOf(md5->Finish());
  if (st.ok()) st = (*w)->Commit(etag);
  if (!st.ok()) co_return st;
  XmlDoc doc("CopyPartResult");
  AddText(doc.root(), "LastModified", Iso8601(rd->handle.meta().atime_ns));
  AddText(doc.root(), "ETag", "\"" + etag + "\"");
  co_return co_await ReplyXml(r, doc);
}

// An s3:// bucket's upload keeps its parts locally too: at completion the object goes up to S3
// (itself as a multipart upload when large) before it commits here, and S3's ETag is its ETag.
Task<Handled> CompleteMultipartUpload(Request& r) {
  const std::string id = r.param("uploadId");
  auto body = co_await r.ex.ReadBody(kMaxCompleteBody);
  if (!body.ok()) co_return body.status();
  auto listed = ParseCompleteRequest(*body, kMaxParts);
  if (!listed.ok()) co_return r.Fail("MalformedXML", listed.status());
  auto up = r.ctx.store.MpuDescribe(r.bucket, r.key, id);
  if (!up.ok()) co_return up.status();
  std::vector<uint32_t> nums;
  std::vector<std::string> md5s;
  for (size_t i = 0; i < listed->size(); ++i) {
    const CompletedPart& p = (*listed)[i];
    if (i > 0 && p.number <= (*listed)[i - 1].number) {
      co_return r.Fail("InvalidPartOrder", Status::InvalidArgument("the list of parts was not in ascending order"));
    }
    auto have = std::find_if(up->parts.begin(), up->parts.end(), [&](const MpuPartInfo& x) { return x.num == p.number; });
    if (have == up->parts.end() || have->tag.empty() || (!p.etag.empty() && p.etag != have->tag)) {
      co_return r.Fail("InvalidPart", Status::InvalidArgument("part " + std::to_string(p.number) +
                                                              " could not be found, or its ETag does not match"));
    }
    nums.push_back(p.number);
    md5s.push_back(have->tag);
  }
  // The store's object is the upload's parts 1..N, all of them (chunk k is part k): a subset,
  // or numbers with gaps, are kept and renumbered first (the others dropped, as S3 does).
  if (nums.size() != up->parts.size() || nums.back() != nums.size()) {
    if (Status st = r.ctx.store.MpuKeepOnly(r.bucket, r.key, id, nums); !st.ok()) {
      co_return st.code() == Status::Code::kInvalidArgument ? r.Fail("InvalidPart", st) : st;
    }
    for (size_t i = 0; i < nums.size(); ++i) nums[i] = static_cast<uint32_t>(i + 1);
  }
  std::string etag = MultipartEtag(md5s);
  auto meta = std::make_shared<ObjectMeta>();
  Status st;
  if (!IsRemoteKey(r.bucket)) {
    st = r.ctx.store.MpuComplete(r.bucket, r.key, id, nums, {{std::string(kEtagKey), etag}}, meta.get());
  } else {
    std::function<Status()> complete = [&store = r.ctx.store, through = r.ctx.remote.UploadThrough(r.bucket, r.key),
                                        bucket = r.bucket, key = r.key, id, nums, meta] {
      return store.MpuComplete(bucket, key, id, nums, {}, meta.get(), through);
    };
    st = co_await OffloadStatus(r.ctx.remote.pool(), std::move(complete));
    if (const std::string* remote_etag = meta->custom_value(kEtagKey)) etag = *remote_etag;
  }
  if (!st.ok()) co_return st;
  XmlDoc doc("CompleteMultipartUploadResult");
  AddText(doc.root(), "Location", "/" + r.bucket_name + "/" + r.key);
  AddText(doc.root(), "Bucket", r.bucket_name);
  AddText(doc.root(), "Key", r.key);
  AddText(doc.root(), "ETag", "\"" + etag + "\"");
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> AbortMultipartUpload(Request& r) {
  Status st = r.ctx.store.MpuAbort(r.bucket, r.key, r.param("uploadId"));
  if (!st.ok()) co_return st;
  HeaderList headers = {{"x-amz-request-id", r.request_id}};
  co_return co_await r.ex.Reply(http::status::no_content, headers);
}

Task<Handled> ListParts(Request& r) {
  const std::string id = r.param("uploadId");
  auto up = r.ctx.store.MpuDescribe(r.bucket, r.key, id);
  if (!up.ok()) co_return up.status();
  uint64_t max_parts = 1000, marker = 0;
  if (std::string s = r.param("max-parts"); !s.empty()) {
    auto n = ParseUint(s);
    if (!n) co_return r.Fail("InvalidArgument", Status::InvalidArgument("invalid max-parts \"" + s.substr(0, 16) + "\""));
    max_parts = std::min<uint64_t>(*n, 1000);
  }
  if (std::string s = r.param("part-number-marker"); !s.empty()) {
    auto n = ParseUint(s);
    if (!n) co_return r.Fail("InvalidArgument", Status::InvalidArgument("invalid part-number-marker \"" + s.substr(0, 16) + "\""));
    marker = *n;
  }
  XmlDoc doc("ListPartsResult");
  pugi::xml_node root = doc.root();
  AddText(root, "Bucket", r.bucket_name);
  AddText(root, "Key", r.key);
  AddText(root, "UploadId", id);
  AddText(root, "PartNumberMarker", std::to_string(marker));
  std::vector<const MpuPartInfo*> page;
  bool truncated = false;
  for (const MpuPartInfo& p : up->parts) {
    if (p.num <= marker) continue;
    if (page.size() == max_parts) {
      truncated = true;
      break;
    }
    page.push_back(&p);
  }
  if (!page.empty()) AddText(root, "NextPartNumberMarker", std::to_string(page.back()->num));
  AddText(root, "MaxParts", std::to_string(max_parts));
  AddText(root, "IsTruncated", truncated ? "true" : "false");
  for (const MpuPartInfo* p : page) {
    pugi::xml_node n = root.append_child("Part");
    AddText(n, "PartNumber", std::to_string(p->num));
    AddText(n, "LastModified", Iso8601(up->created_ns));
    AddText(n, "ETag", "\"" + p->tag + "\"");
    AddText(n, "Size", std::to_string(p->size));
  }
  co_return co_await ReplyXml(r, doc);
}

Task<Handled> ListMultipartUploads(Request& r) {
  const std::string prefix = r.param("prefix"), key_marker = r.param("key-marker"), id_marker = r.param("upload-id-marker");
  uint64_t max_uploads = 1000;
  if (std::string s = r.param("max-uploads"); !s.empty()) {
    auto n = ParseUint(s);
    if (!n) co_return r.Fail("InvalidArgument", Status::InvalidArgument("invalid max-uploads \"" + s.substr(0, 16) + "\""));
    max_uploads = std::min<uint64_t>(*n, 1000);
  }
  XmlDoc doc("ListMultipartUploadsResult");
  pugi::xml_node root = doc.root();
  AddText(root, "Bucket", r.bucket_name);
  AddText(root, "KeyMarker", key_marker);
  AddText(root, "UploadIdMarker", id_marker);
  std::vector<MpuInfo> page;
  bool truncated = false;
  for (MpuInfo& u : r.ctx.store.MpuList(r.bucket)) {
    if (!u.name.starts_with(prefix)) continue;
    // After the markers: keys after key-marker, or that key's uploads after upload-id-marker.
    if (!key_marker.empty() && (u.name < key_marker || (u.name == key_marker && (id_marker.empty() || u.id <= id_marker)))) {
      continue;
    }
    if (page.size() == max_uploads) {
      truncated = true;
      break;
    }
    page.push_back(std::move(u));
  }
  if (truncated && !page.empty()) {
    AddText(root, "NextKeyMarker", page.back().name);
    AddText(root, "NextUploadIdMarker", page.back().id);
  }
  if (!prefix.empty()) AddText(root, "Prefix", prefix);
  AddText(root, "MaxUploads", std::to_string(max_uploads));
  AddText(root, "IsTruncated", truncated ? "true" : "false");
  for (const MpuInfo& u : page) {
    pugi::xml_node n = root.append_child("Upload");
    AddText(n, "Key", u.name);
    AddText(n, "UploadId", u.id);
    AddText(n, "Initiated", Iso8601(u.created_ns));
    AddText(n, "StorageClass", "STANDARD");
  }
  co_return co_await ReplyXml(r, doc);
}

}  // namespace ais::s3
