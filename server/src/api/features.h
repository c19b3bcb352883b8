// AIS cluster feature flags (cmn/feat): a 64-bit field, bit i named kClusterFeatures[i]. The
// cluster config shows it as a decimal string; set-config takes names, "none", or a number.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ais {

inline constexpr std::array<std::string_view, 28> kClusterFeatures = {
    "Enforce-IntraCluster-Access", "Skip-Loading-VersionChecksum-MD", "Do-not-Auto-Detect-FileShare",
    "S3-API-via-Root",             "Fsync-PUT",                       "LZ4-Block-1MB",
    "LZ4-Frame-Checksum",          "Do-not-Allow-Passing-FQN-to-ETL", "Ignore-LimitedCoexistence-Conflicts",
    "S3-Presigned-Request",        "Do-not-Optimize-Listing-Virtual-Dirs", "Disable-Cold-GET",
    "Streaming-Cold-GET",          "S3-Reverse-Proxy",                "S3-Use-Path-Style",
    "Do-not-Delete-When-Rebalancing", "Do-not-Set-Control-Plane-ToS", "Trust-Crypto-Safe-Checksums",
    "S3-ListObjectVersions",       "Enable-Detailed-Prom-Metrics",    "Force-Container-CPU-Mem",
    "Resume-Interrupted-MPU",      "Keep-Unknown-FQN",                "Load-Balance-GET",
    "Count-Object-NotFound-Stats", "Enable-Go-Runtime-Metrics",       "Dload-Allow-Private-Egress",
    "S3-Redirect-Rebuild",
};

// Serve the S3 API at the root path too (/ → /s3).
inline constexpr uint64_t kFeatS3ApiViaRoot = uint64_t{1} << 3;

// Downloads may reach private addresses (RFC 1918, IPv6 ULA); download/egress_guard.h.
inline constexpr uint64_t kFeatDloadAllowPrivateEgress = uint64_t{1} << 26;

// "S3-API-via-Root", "S3-API-via-Root,Fsync-PUT" (or space-separated), "none", "8" -> bits;
// kInvalidArgument naming an unknown feature.
Result<uint64_t> ParseClusterFeatures(std::string_view text);

}  // namespace ais
