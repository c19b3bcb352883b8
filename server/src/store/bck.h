// Bucket identity across providers and namespaces. Buckets of every provider share one store; the
// store names a bucket by its key:
//   "<name>"                       an `ais` bucket of the global namespace
//   "<provider>/<name>"            a cloud bucket ("aws/b")
//   "ais/@<uuid>#<ns>/<name>"      an `ais` bucket of a namespace: a local one ("ais/@#ns/b") or
//                                  a remote AIS cluster's ("ais/@<uuid>#/b"; uuid, never alias)
// A valid bucket name has no '/', '@' or '#', so keys never collide. The key is also the
// bucket's directory below a mountpath: <mp>/ais/<name>, else <mp>/<key>.
#pragma once

#include <string>
#include <string_view>

namespace ais {

inline constexpr std::string_view kProviderAis = "ais";
inline constexpr std::string_view kProviderAws = "aws";
inline constexpr std::string_view kProviderGcp = "gcp";
inline constexpr std::string_view kProviderAzure = "azure";

// The cloud providers served (the cache tier's backends: S3, GCS and Azure Blob); oci is not.
inline bool IsServedCloud(std::string_view provider) {
  return provider == kProviderAws || provider == kProviderGcp || provider == kProviderAzure;
}

// A bucket namespace (cmn.Ns): both empty is the global one; a uuid names a remote AIS cluster.
struct BucketNs {
  std::string uuid;
  std::string name;

  bool global() const { return uuid.empty() && name.empty(); }
  bool remote() const { return !uuid.empty(); }
  // "@uuid#name" (Ns.Uname): how a query and a uname carry it; "@#" for the global one.
  std::string Uname() const { return "@" + uuid + "#" + name; }
  // "@uuid#name", "#name", "@uuid" (Ns.String), "" for the global one.
  std::string Display() const {
    std::string out;
    if (!uuid.empty()) out += "@" + uuid;
    if (!name.empty()) out += "#" + name;
    return out;
  }
  bool operator==(const BucketNs&) const = default;
};

// The store key of `name` of the (canonical) provider in the global namespace.
inline std::string BucketKey(std::string_view provider, std::string_view name) {
  if (provider.empty() || provider == kProviderAis) return std::string(name);
  std::string key(provider);
  key += '/';
  key += name;
  return key;
}

// The store key of `name` of the provider in namespace `ns`.
inline std::string BucketKey(std::string_view provider, const BucketNs& ns, std::string_view name) {
  if (ns.global()) return BucketKey(provider, name);
  std::string key(provider.empty() ? kProviderAis : provider);
  key += '/';
  key += ns.Uname();
  key += '/';
  key += name;
  return key;
}

// The canonical provider of a key ("ais", "aws", "gcp", "azure").
inline std::string_view KeyProvider(std::string_view key) {
  auto slash = key.find('/');
  return slash == std::string_view::npos ? kProviderAis : key.substr(0, slash);
}

// The bucket name of a key.
inline std::string_view KeyName(std::string_view key) {
  auto slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

// The namespace of a key.
inline BucketNs KeyNs(std::string_view key) {
  auto first = key.find('/'), last = key.rfind('/');
  if (first == last) return {};
  std::string_view uname = key.substr(first + 2, last - first - 2);  // past '@'
  auto hash = uname.find('#');
  return {std::string(uname.substr(0, hash)), std::string(uname.substr(hash + 1))};
}

// A bucket of a remote AIS cluster ("ais/@<uuid>#.../b").
inline bool IsRemoteAisKey(std::string_view key) { return key.starts_with("ais/@") && !key.starts_with("ais/@#"); }

// A bucket whose objects live elsewhere (a cloud's, or a remote AIS cluster's), cached here.
inline bool IsRemoteKey(std::string_view key) {
  return key.find('/') != std::string_view::npos && (!key.starts_with("ais/") || IsRemoteAisKey(key));
}

// The AIS scheme of a provider: "ais://", "s3://" (apc.ToScheme).
inline std::string_view ProviderScheme(std::string_view provider) {
  if (provider == kProviderAws) return "s3://";
  if (provider == kProviderGcp) return "gs://";
  if (provider == kProviderAzure) return "az://";
  if (provider == "oci") return "oc://";
  return "ais://";
}

// "ais://b", "s3://b", "ais://#ns/b", "ais://@uuid#ns/b": how AIS names a bucket in messages.
inline std::string BucketCname(std::string_view key) {
  std::string out(ProviderScheme(KeyProvider(key)));
  if (std::string ns = KeyNs(key).Display(); !ns.empty()) out += ns + "/";
  out += KeyName(key);
  return out;
}

// "ais://b/o".
inline std::string ObjectCname(std::string_view key, std::string_view name) {
  std::string out = BucketCname(key);
  out += '/';
  out += name;
  return out;
}

// A missing object's kNotFound message, as AIS words it.
inline std::string ObjNotFoundMessage(std::string_view key, std::string_view name) {
  return ObjectCname(key, name) + " does not exist";
}

}  // namespace ais
