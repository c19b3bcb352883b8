// Permission bits (AIS apc.AccessAttrs): what a token, a role or a bucket's `access` property
// allows. The values are AIS's wire values: they appear as decimal strings in tokens and props.
#pragma once

#include <cstdint>
#include <string>

namespace ais::auth {

using AccessAttrs = uint64_t;

// The bits alone, for a file to bring into scope (`using namespace auth::bits;`) without the rest
// of auth (whose names, such as KeyProvider, would clash with the store's in a unity build).
inline namespace bits {

inline constexpr AccessAttrs kGet = 1ULL << 0;
inline constexpr AccessAttrs kObjHead = 1ULL << 1;
inline constexpr AccessAttrs kPut = 1ULL << 2;
inline constexpr AccessAttrs kAppend = 1ULL << 3;
inline constexpr AccessAttrs kObjDelete = 1ULL << 4;
inline constexpr AccessAttrs kObjMove = 1ULL << 5;
inline constexpr AccessAttrs kPromote = 1ULL << 6;
inline constexpr AccessAttrs kObjUpdate = 1ULL << 7;
inline constexpr AccessAttrs kBckHead = 1ULL << 8;
inline constexpr AccessAttrs kObjList = 1ULL << 9;
inline constexpr AccessAttrs kPatch = 1ULL << 10;
inline constexpr AccessAttrs kBckSetAcl = 1ULL << 11;
inline constexpr AccessAttrs kListBuckets = 1ULL << 12;
inline constexpr AccessAttrs kShowCluster = 1ULL << 13;
inline constexpr AccessAttrs kCreateBucket = 1ULL << 14;
inline constexpr AccessAttrs kDestroyBucket = 1ULL << 15;
inline constexpr AccessAttrs kMoveBucket = 1ULL << 16;
inline constexpr AccessAttrs kAdmin = 1ULL << 17;

inline constexpr AccessAttrs kAccessRO = kGet | kObjHead | kBckHead | kObjList;  // 771
inline constexpr AccessAttrs kAccessRW = kAccessRO | kPut | kAppend | kObjDelete | kObjMove;  // 831
inline constexpr AccessAttrs kAccessBucketAdmin = kPatch | kBckSetAcl | kObjUpdate;  // 3200
inline constexpr AccessAttrs kClusterAccessRO = kListBuckets | kShowCluster;  // 12288
inline constexpr AccessAttrs kClusterAccessRW = kClusterAccessRO | kCreateBucket | kDestroyBucket | kMoveBucket;  // 126976
inline constexpr AccessAttrs kAccessAll = ~0ULL;  // a bucket's default `access`

// The bits a check splits into (AIS CheckPermissions): what the cluster grant decides, and what a
// bucket grant (if the token has one for the bucket) decides instead of it.
inline constexpr AccessAttrs kClusterBits = kClusterAccessRW | kAdmin;
inline constexpr AccessAttrs kBucketBits = kAccessRW | kAccessBucketAdmin | kPromote;

}  // namespace bits

// "GET,PUT,..." in AIS's names ("su" for every bit, "none" for none), for messages.
std::string AccessNames(AccessAttrs bits);

}  // namespace ais::auth
