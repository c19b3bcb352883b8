// Bucket identity across providers. Buckets of every provider share one store; the store names a
// bucket by its key: the bare name for an `ais` bucket, "<provider>/<name>" for a remote one
// (a valid bucket name has no '/', so keys never collide). The key is also the bucket's
// directory below a mountpath: <mp>/ais/<name> or <mp>/<provider>/<name>.
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

// The store key of `name` of the (canonical) provider.
inline std::string BucketKey(std::string_view provider, std::string_view name) {
  if (provider.empty() || provider == kProviderAis) return std::string(name);
  std::string key(provider);
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
  auto slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

inline bool IsRemoteKey(std::string_view key) { return key.find('/') != std::string_view::npos; }

// The AIS scheme of a provider: "ais://", "s3://" (apc.ToScheme).
inline std::string_view ProviderScheme(std::string_view provider) {
  if (provider == kProviderAws) return "s3://";
  if (provider == kProviderGcp) return "gs://";
  if (provider == kProviderAzure) return "az://";
  if (provider == "oci") return "oc://";
  return "ais://";
}

// "ais://b", "s3://b": how AIS names a bucket in messages.
inline std::string BucketCname(std::string_view key) {
  std::string out(ProviderScheme(KeyProvider(key)));
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
