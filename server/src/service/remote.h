// The handlers' side of remote buckets: which bucket a request names, and the cache tier's calls
// a request makes on its way (cold GET, HEAD and listing of what is not cached, write-through),
// each run off the I/O thread (service/offload.h).
#pragma once

#include <string>

#include "api/object_list.h"
#include "service/context.h"
#include "remote/cache_tier.h"
#include "remote/backend.h"

namespace ais {

// The store key (store/bck.h) of bucket `name` with the request's provider and namespace, checked
// (name, namespace, a served provider; a remote cluster's alias or UUID resolved to its UUID),
// the bucket not looked up.
Result<std::string> NameBucket(ServerContext& ctx, const Exchange& ex, const std::string& name);
Result<std::string> NameBucketOf(ServerContext& ctx, std::string_view provider, const BucketNs& ns,
                                 const std::string& name);
// NameBucket, and a remote bucket added to the BMD on first use if the backend says it exists
// (AIS adds remote buckets on the fly). Query `presence` 2..4 (present only) answers 404 for a
// remote bucket not yet added, without asking the backend.
Task<Result<std::string>> ResolveBucket(ServerContext& ctx, Exchange& ex, const std::string& name);
// The same for a bucket a request body names by provider ("" = ais) and name, in the global
// namespace (a download's `bucket`); !add_remote: a remote bucket not yet added is a 404.
Task<Result<std::string>> ResolveBucketOf(ServerContext& ctx, std::string_view provider, const std::string& name,
                                          bool add_remote = true);
// A remote bucket's key in the BMD: added if not yet (and `add_remote`), else a 404. Any other
// key is returned as it is.
Task<Result<std::string>> AddRemoteBucket(ServerContext& ctx, const std::string& key, bool add_remote = true);

// Before a GET (or a copy) of a remote bucket's object: fetches it unless cached; with
// `latest-ver=true` or the bucket's versioning.validate_warm_get/synchronize, checks a cached
// copy against the remote first and fetches it again if it changed. A copy the remote deleted is
// a 404 (and removed locally when the bucket synchronizes).
// `local`: the store's Head of the object, when the caller has it already (null: ask the store).
Task<Status> EnsureCached(ServerContext& ctx, Exchange& ex, const std::string& key, const std::string& name,
                          const Result<ObjectMeta>* local = nullptr);

// The blob download a GET asks for: headers Ais-Blob-Download: true (always), or
// Ais-Blob-Threshold: N (only for a remote object of N bytes or more), with Ais-Blob-Chunk and
// Ais-Blob-Workers; kInvalidArgument naming a malformed one.
struct BlobRequest {
  bool blob = false;                  // a blob download whatever the size
  std::optional<uint64_t> threshold;  // or one if the remote size is at least this
  BlobOptions options;
};
Result<BlobRequest> ParseBlobRequest(const Exchange& ex);

// HEAD of an object that is not cached: what the remote says, as an ObjectMeta (size, custom
// metadata per spec remote-backend §3, the MD5 of a single-part upload as its checksum).
Task<Result<ObjectMeta>> HeadRemote(ServerContext& ctx, const std::string& key, const std::string& name);

// HEAD ?latest-ver=true of a cached object: OK when the remote still has it unchanged, kGone when
// the remote deleted it, kConflict "metadata mismatch" when it changed.
Task<Status> CheckLatest(ServerContext& ctx, const std::string& key, const ObjectMeta& cached);

// One page of a remote bucket's listing as list-objects gives it (spec remote-backend §7):
// S3's page (with `delimited`, directories flagged kEntryIsDir unless `no_dirs`; with
// `no_recursion`, one level by the ais:// rules and a name as continuation token), each object
// either S3's entry alone (`remote_only`) or merged with its cached copy (flag kEntryIsCached);
// `not_cached` leaves the cached ones out. Blocks on S3: call it off the I/O threads.
struct RemotePageQuery {
  std::string prefix;
  std::string token;
  std::string start_after{};  // the first page's names come after it (S3 `start-after`)
  uint32_t max_keys = kMaxRemotePage;
  bool remote_only = false;
  bool not_cached = false;
  bool delimited = false;     // S3's own "/" grouping (the S3 front end's delimiter)
  bool no_recursion = false;  // LsNoRecursion: one level, as an ais:// bucket lists it
  bool no_dirs = false;
};
Result<ListPage> ListRemotePage(CacheTier& tier, Store& store, const std::string& key, const RemotePageQuery& q);

// list-objects on a remote bucket (spec remote-backend §7), except `cached` listings, which are
// local and go the ais way.
Task<Handled> ListRemoteObjects(ServerContext& ctx, Exchange& ex, const std::string& key, const ListObjectsMsg& msg,
                                const ListProps& props, uint64_t page_size);


// PUT to a remote bucket: uploads what `w` received, then merges the remote's metadata into it
// (the caller commits). Nothing is committed when the upload fails.
Task<Status> WriteThrough(ServerContext& ctx, const std::string& key, const std::string& name, ObjectWriter& w);

// DELETE in a remote bucket: in the backend first, then the cached copy (if any).
Task<Status> DeleteThrough(ServerContext& ctx, const std::string& key, const std::string& name);

}  // namespace ais
