// AIS header and query-parameter names used on the wire (api/apc/headers.go, query.go).
#pragma once

namespace ais::hdr {

inline constexpr const char* kChecksumType = "Ais-Checksum-Type";
inline constexpr const char* kChecksumValue = "Ais-Checksum-Value";
inline constexpr const char* kAtime = "Ais-Atime";
inline constexpr const char* kVersion = "Ais-Version";
inline constexpr const char* kCustomMd = "Ais-Custom-Md";
inline constexpr const char* kPresent = "Ais-Present";
inline constexpr const char* kBucketName = "Ais-Bucket-Name";
inline constexpr const char* kBucketProvider = "Ais-Bucket-Provider";
inline constexpr const char* kName = "Ais-Name";
inline constexpr const char* kLocation = "Ais-Location";
inline constexpr const char* kMirrorCopies = "Ais-Mirror-Copies";
inline constexpr const char* kMirrorPaths = "Ais-Mirror-Paths";
inline constexpr const char* kChunksCount = "Ais-Chunks-Count";
inline constexpr const char* kChunksMaxSize = "Ais-Chunks-Max-Chunk-Size";
inline constexpr const char* kBucketProps = "Ais-Bucket-Props";
inline constexpr const char* kNodeUptime = "Ais-Node-Uptime";
inline constexpr const char* kClusterUptime = "Ais-Cluster-Uptime";
inline constexpr const char* kHdrError = "Hdr-Error";

}  // namespace ais::hdr
