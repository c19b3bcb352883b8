// DownloadRequest: the body of POST /v1/download (AIS dload.Body: a `type` and the dload.Base
// fields, then the type's own), decoded and checked; AdminRequest: the body of GET and DELETE
// /v1/download (dload.AdminBody). Field names, defaults and error texts as AIS ext/dload/api.go
// (spec backends-and-downloads §7). Every field AIS defines is either served or refused, never
// ignored (a `backend` job through an ETL is kNotSupported); a key AIS does not define is
// kInvalidArgument.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobs/object_selection.h"
#include "util/status.h"

namespace ais {

enum class DownloadType { kSingle, kRange, kMulti, kBackend };
std::string_view DownloadTypeName(DownloadType t);

// One file of a download: the object it becomes and where it comes from ("" link: a cold GET
// from the bucket's backend, `from_remote`).
struct DownloadItem {
  std::string name;
  std::string link;
};

struct DownloadRequest {
  DownloadType type = DownloadType::kSingle;
  std::string bucket;    // bucket.name
  std::string provider;  // bucket.provider as given ("" = ais)
  std::string description;  // as given; DefaultDescription() when empty
  std::chrono::milliseconds timeout{0};  // per file; 0: the downloader's default
  std::chrono::milliseconds progress_interval{10000};
  int64_t connections = 0;      // limits.connections: files fetched at once (0: the default)
  int64_t bytes_per_hour = 0;   // limits.bytes_per_hour (0: unlimited)
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every GET (not `backend`)
  // single, multi: the files; range: expanded from `tmpl` when the job runs.
  std::vector<DownloadItem> items;
  NameTemplate tmpl;       // range: the links
  std::string tmpl_text;   // range: as given
  std::string subdir;      // range: object names are subdir/<last element of the link>
  std::string prefix, suffix;  // backend: which remote objects
  bool sync = false;           // backend `synchronize`: also drop local objects the remote lacks
  bool from_remote = false;    // single: `from_remote`
  std::string etl_name;  // "": none; else each file goes through this ETL (etl_args its argument)
  std::string etl_args;

  // The number of files, or -1 when unknown before listing (backend).
  int64_t Total() const;
  // AIS's default description for the type; `cname` names the bucket ("ais://b").
  std::string DefaultDescription(const std::string& cname) const;
};

// Decodes a POST /v1/download body. kInvalidArgument naming the field or the rule (AIS's words),
// kNotSupported for what is not served (a backend job through an ETL).
Result<DownloadRequest> ParseDownloadRequest(const nlohmann::json& body);

struct AdminRequest {
  std::string id;
  std::string regex;  // POSIX extended, matched against the description
  bool only_active = false;
};
// `require_id`: abort and remove (DELETE) name one job.
Result<AdminRequest> ParseAdminRequest(const nlohmann::json& body, bool require_id);

// A link as AIS fetches it: "http://" prepended when it names no scheme.
std::string NormalizeLink(std::string_view link);
// The object name a link gives: the last element of its path, query dropped, percent-decoded
// (AIS path.Base + NormalizeObjName); kInvalidArgument when that is no valid object name.
Result<std::string> ObjectNameOfLink(std::string_view link);
// An object name as AIS keeps it: "?query" dropped, percent-decoded, validated.
Result<std::string> NormalizeObjectName(std::string_view name);

}  // namespace ais
