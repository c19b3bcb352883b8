// Remote AIS clusters as a backend (`ais://@alias/bucket`): the attached clusters (the cluster
// config's `backend.ais`: alias -> URL) and AisClient, the RemoteBackend that speaks AIS's REST
// API to one of them (libcurl through PerformHttp; nlohmann-json for its documents). The remote
// may be a real AIS cluster (its proxy redirects object requests to a target: followed) or
// another of our servers.
//
// A cluster is known by its alias and, once its Smap was read (GET /v1/daemon?what=smap), by its
// UUID; a bucket of it is keyed by the UUID (store/bck.h: "ais/@<uuid>#<ns>/<name>"). One that
// cannot be reached stays attached, "defunct" until it answers. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "remote/backend.h"
#include "remote/http_call.h"
#include "store/bck.h"
#include "util/curl_handles.h"
#include "util/status.h"

namespace ais {

// A bucket of a remote cluster, as its list-buckets names it (ns.uuid: the cluster's UUID).
struct RemoteAisBucket {
  std::string name;
  BucketNs ns;
};

// One attached cluster as `GET /v1/cluster?what=remote` shows it.
struct RemoteAisInfo {
  std::string alias;
  std::string url;
  std::string uuid;      // "" while it never answered
  nlohmann::json smap;   // null while unreachable
};

// The client of one remote cluster. Its `bucket` arguments are "<name>" for the remote's global
// namespace and "<ns>/<name>" for its namespace `#ns` (AisBucketArg).
class AisClient : public RemoteBackend {
 public:
  AisClient(std::string alias, std::string url, std::string uuid);
  ~AisClient() override;
  AisClient(const AisClient&) = delete;
  AisClient& operator=(const AisClient&) = delete;

  std::string_view provider() const override { return "ais"; }
  std::string Describe() const override { return "remote-cluster[" + uuid_ + "/@" + alias_ + "] " + url_; }

  Result<RemoteBucketInfo> HeadBucket(const std::string& bucket) override;
  Result<std::vector<std::string>> ListBuckets() override;  // the global namespace's
  Result<RemoteObjectAttrs> HeadObject(const std::string& bucket, const std::string& key) override;
  Status GetObject(const std::string& bucket, const std::string& key,
                   std::optional<std::pair<uint64_t, uint64_t>> range, const OnAttrs& on_attrs,
                   const OnData& on_data, const RemoteObjectAttrs* known) override;
  Result<RemoteObjectAttrs> PutObject(const std::string& bucket, const std::string& key, uint64_t size,
                                      const ReadBody& body, const std::function<Status()>& rewind,
                                      const KeyValues& user_meta) override;
  Status DeleteObject(const std::string& bucket, const std::string& key) override;
  Result<RemoteListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                     const std::string& token, uint32_t max_keys, bool delimited,
                                     const std::string& start_after) override;

  // Every bucket of the remote cluster in namespace `ns_name` ("": the global one), as list-buckets
  // with provider=ais and presence=0 gives them.
  Result<std::vector<RemoteAisBucket>> ListAisBuckets(const std::string& ns_name);
  // The bucket's props on the remote (create-bck, destroy-bck are the remote's own business).
  Status CreateBucket(const std::string& bucket);
  Status DestroyBucket(const std::string& bucket);

  // What an object's AIS headers say (GET or HEAD), as the cache tier keeps it.
  static RemoteObjectAttrs AttrsFromHeaders(const HttpCall& call);

 private:
  // The URL of `path` ("/v1/objects/b/o") on the remote with the bucket's provider and namespace.
  std::string Url(const std::string& path, const std::string& bucket_arg, const std::string& query = "") const;
  Status Perform(HttpCall& call, const std::string& bucket, bool object);

  const std::string alias_, url_, uuid_;
  std::unique_ptr<CurlHandles> handles_;
};

// "<name>" or "<ns>/<name>": the AisClient bucket argument of the store key of a remote bucket.
std::string AisBucketArg(std::string_view key);

class AisClusters {
 public:
  AisClusters();
  ~AisClusters();
  AisClusters(const AisClusters&) = delete;
  AisClusters& operator=(const AisClusters&) = delete;

  // remote-attach: `alias` (letters, digits, '-', '_', single '.'; 2..64; not "what", not an
  // attached cluster's UUID) at `url` (http or https). The same alias and URL again: a refresh;
  // another URL for an attached alias: refused. The cluster is probed; unreachable, it stays attached.
  Status Attach(const std::string& alias, const std::string& url);
  // remote-detach: 404 when `alias` (or a UUID) is not attached.
  Status Detach(const std::string& alias);
  // The UUID of an attached cluster named by alias or UUID (probing one never reached); 404
  // `remote cluster "<x>" does not exist`, 503 when it was never reachable.
  Result<std::string> ResolveUuid(const std::string& alias_or_uuid);
  // The UUID of an attached cluster named by alias or UUID, if known now (no probe).
  std::optional<std::string> KnownUuid(const std::string& alias_or_uuid) const;
  // Every attached cluster, each probed again (GET /v1/cluster?what=remote re-probes).
  std::vector<RemoteAisInfo> Show();
  // `backend.ais` as the cluster config carries it: {"alias": ["url"], ...}.
  nlohmann::json ConfigJson() const;
  size_t size() const;
  // Counts the changes (attach, detach): meta.RemAisVec's `ver`.
  int64_t version() const;
  // The client of the cluster with this UUID.
  Result<std::shared_ptr<AisClient>> ClientOf(const std::string& uuid);
  // The buckets of the cluster `ns.uuid` names ("@": every attached one), in namespace ns.name.
  Result<std::vector<RemoteAisBucket>> ListBuckets(const BucketNs& ns);

  // State kept across restarts: `path` is read now (if it exists) and written on every change.
  Status Load(const std::string& path);

 private:
  struct Entry {
    std::string url;
    std::string uuid;
    nlohmann::json smap;
    std::shared_ptr<AisClient> client;  // once the UUID is known
  };
  // Reads the cluster's Smap; sets uuid, smap and client (REQUIRES: mu_ not held).
  Status Probe(const std::string& alias);
  Status SaveLocked() const;  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::map<std::string, Entry> by_alias_;  // guarded by mu_
  std::string path_;                       // guarded by mu_; "" = not kept
  int64_t version_ = 0;                    // guarded by mu_
  std::unique_ptr<CurlHandles> handles_;
};

}  // namespace ais
