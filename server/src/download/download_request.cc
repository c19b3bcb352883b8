#include "download/download_request.h"

#include <regex>

#include "util/go_duration.h"
#include "store/names.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr std::string_view kBadType = "input does not match any of the supported formats (single, range, multi, backend)";
// A range template may name at most this many files (a job keeps a line of status per file).
constexpr uint64_t kMaxRangeFiles = 1'000'000;
constexpr size_t kMaxRegex = 256;

Status DecodeHeaders(const nlohmann::json& v, std::vector<std::pair<std::string, std::string>>* out) {
  if (!v.is_object()) return Status::InvalidArgument("headers: expecting an object of header name -> [values]");
  for (const auto& [name, values] : v.items()) {
    if (name.empty() || name.find_first_of(":\r\n") != std::string::npos) {
      return Status::InvalidArgument("headers: invalid header name \"" + name.substr(0, 64) + "\"");
    }
    if (!values.is_array()) return Status::InvalidArgument("headers." + name + ": expecting an array of strings");
    for (const auto& value : values) {
      if (!value.is_string()) return Status::InvalidArgument("headers." + name + ": expecting an array of strings");
      const auto& s = value.get_ref<const std::string&>();
      if (s.find_first_of("\r\n") != std::string::npos) {
        return Status::InvalidArgument("headers." + name + ": a value may not hold a line break");
      }
      out->emplace_back(name, s);
    }
  }
  return Status::OK();
}

// A JSON value's type as Go's %T prints what encoding/json decoded it into (AIS's words).
std::string GoTypeName(const nlohmann::json& v) {
  if (v.is_number()) return "float64";
  if (v.is_boolean()) return "bool";
  if (v.is_string()) return "string";
  if (v.is_null()) return "<nil>";
  if (v.is_array()) return "[]interface {}";
  return "map[string]interface {}";
}

constexpr std::string_view kBadObjects = "JSON body should be map (string -> string) or array of strings, found: ";

// multi's `objects`: {"name": "link", ...} or ["link", ...].
Status DecodeObjects(const nlohmann::json* v, std::vector<DownloadItem>* out) {
  if (v == nullptr) return Status::InvalidArgument("body should not be empty");
  if (v->is_object()) {
    for (const auto& [name, link] : v->items()) {
      if (!link.is_string()) {
        return Status::InvalidArgument(std::string(kBadObjects) + "map[string]interface {} (" + GoTypeName(link) +
                                       " at \"" + name.substr(0, 64) + "\")");
      }
      auto norm = NormalizeObjectName(name);
      if (!norm.ok()) return norm.status();
      out->push_back({*norm, NormalizeLink(link.get<std::string>())});
    }
  } else if (v->is_array()) {
    for (const auto& link : *v) {
      if (!link.is_string()) {
        return Status::InvalidArgument(std::string(kBadObjects) + "[]interface {} (" + GoTypeName(link) + " in it)");
      }
      const auto& s = link.get_ref<const std::string&>();
      auto name = ObjectNameOfLink(s);
      if (!name.ok()) return name.status();
      out->push_back({*name, NormalizeLink(s)});
    }
  } else {
    return Status::InvalidArgument(std::string(kBadObjects) + GoTypeName(*v));
  }
  if (out->empty()) return Status::InvalidArgument("body should not be empty");
  return Status::OK();
}

}  // namespace

std::string_view DownloadTypeName(DownloadType t) {
  switch (t) {
    case DownloadType::kSingle: return "single";
    case DownloadType::kRange: return "range";
    case DownloadType::kMulti: return "multi";
    case DownloadType::kBackend: return "backend";
  }
  return "single";
}

int64_t DownloadRequest::Total() const {
  switch (type) {
    case DownloadType::kRange: return static_cast<int64_t>(tmpl.Count());
    case DownloadType::kBackend: return -1;
    default: return static_cast<int64_t>(items.size());
  }
}

std::string DownloadRequest::DefaultDescription(const std::string& cname) const {
  switch (type) {
    case DownloadType::kSingle: {
      std::string obj = cname;
      if (!items.empty()) obj += (obj.ends_with('/') ? "" : "/") + items[0].name;
      return (items.empty() ? std::string() : items[0].link) + " -> " + obj;
    }
    case DownloadType::kRange: return tmpl_text + " -> " + cname;
    case DownloadType::kMulti: return "multi-download -> " + cname;
    case DownloadType::kBackend: return "remote bucket prefetch -> " + cname;
  }
  return cname;
}

std::string NormalizeLink(std::string_view link) {
  if (link.empty() || link.find("://") != std::string_view::npos) return std::string(link);
  return "http://" + std::string(link);
}

Result<std::string> NormalizeObjectName(std::string_view name) {
  std::string_view path = name.substr(0, name.find('?'));
  auto decoded = PercentDecode(path, false);
  if (!decoded) return Status::InvalidArgument("invalid object name \"" + std::string(name.substr(0, 128)) + "\"");
  if (Status st = ValidateObjectName(*decoded); !st.ok()) return st;
  return *decoded;
}

Result<std::string> ObjectNameOfLink(std::string_view link) {
  std::string_view rest = link;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest.remove_prefix(scheme + 3);
    size_t slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  rest = rest.substr(0, rest.find_first_of("?#"));
  while (rest.ends_with('/')) rest.remove_suffix(1);
  std::string_view base = rest.substr(rest.rfind('/') + 1);
  if (base.empty() || base == ".") {
    return Status::InvalidArgument("can not extract a valid 'object_name' from the provided download 'link' \"" +
                                   std::string(link.substr(0, 128)) + "\"");
  }
  return NormalizeObjectName(base);
}

Result<DownloadRequest> ParseDownloadRequest(const nlohmann::json& body) {
  if (!body.is_object()) return Status::InvalidArgument("download request: expecting a JSON object");
  DownloadRequest req;
  std::string type, timeout, progress, link, object_name, tmpl;
  std::string ns_uuid, ns_name;
  const nlohmann::json* headers = nullptr;
  const nlohmann::json* objects = nullptr;
  JsonFields f(body, "");
  f.Str("type", &type).Str("description", &req.description).Str("timeout", &timeout)
      .Str("progress_interval", &progress).Raw("headers", &headers)
      .Str("etl_name", &req.etl_name).Str("etl_args", &req.etl_args)
      .Object("bucket", [&](JsonFields& b) {
        b.Str("name", &req.bucket).Str("provider", &req.provider).Object("namespace", [&](JsonFields& n) {
          n.Str("uuid", &ns_uuid).Str("name", &ns_name);
        });
      })
      .Object("limits", [&](JsonFields& l) {
        l.Int("connections", &req.connections).Int("bytes_per_hour", &req.bytes_per_hour);
      });
  if (!f.ok()) return f.Finish();
  // The type's own fields; a field of another type is an unknown key (Finish refuses it).
  if (type == "single") {
    req.type = DownloadType::kSingle;
    f.Str("link", &link).Str("object_name", &object_name).Bool("from_remote", &req.from_remote);
  } else if (type == "range") {
    req.type = DownloadType::kRange;
    f.Str("template", &tmpl).Str("subdir", &req.subdir);
  } else if (type == "multi") {
    req.type = DownloadType::kMulti;
    f.Raw("objects", &objects);
  } else if (type == "backend") {
    req.type = DownloadType::kBackend;
    f.Str("prefix", &req.prefix).Str("suffix", &req.suffix).Bool("synchronize", &req.sync);
  } else if (type.empty()) {
    return Status::InvalidArgument("'type' field is empty");
  } else {
    return Status::InvalidArgument(std::string(kBadType));
  }
  AIS_RETURN_IF_ERROR(f.Finish());

  // dload.Base
  if (req.bucket.empty()) return Status::InvalidArgument("missing 'bucket.name'");
  if (!ns_uuid.empty() || !ns_name.empty()) {
    return Status::NotSupported("bucket.namespace: only the global namespace is served here");
  }
  if (req.etl_name.empty() && !req.etl_args.empty()) {
    return Status::InvalidArgument("'etl_args' without 'etl_name'");
  }
  if (!req.etl_name.empty() && (req.type == DownloadType::kBackend || req.from_remote)) {
    return Status::NotSupported("a download from a remote bucket through an ETL (etl_name) is not supported: "
                                "transform the bucket (etl-bck) instead");
  }
  if (!timeout.empty()) {
    auto d = ParseGoDuration(timeout);
    if (!d.ok()) return Status::InvalidArgument("failed to parse timeout field: " + d.status().message());
    req.timeout = *d;
  }
  if (!progress.empty()) {
    auto d = ParseGoDuration(progress);
    if (!d.ok()) return Status::InvalidArgument("invalid progress interval \"" + progress.substr(0, 64) + "\"");
    req.progress_interval = *d;
  }
  if (req.connections < 0) {
    return Status::InvalidArgument("'limit.connections' must be non-negative (got: " + std::to_string(req.connections) + ")");
  }
  if (req.bytes_per_hour < 0) {
    return Status::InvalidArgument("'limit.bytes_per_hour' must be non-negative (got: " +
                                   std::to_string(req.bytes_per_hour) + ")");
  }
  if (headers != nullptr) AIS_RETURN_IF_ERROR(DecodeHeaders(*headers, &req.headers));

  switch (req.type) {
    case DownloadType::kSingle: {
      if (link.empty() && !req.from_remote) return Status::InvalidArgument("missing 'link' in the request body");
      std::string name;
      if (!object_name.empty()) {
        auto n = NormalizeObjectName(object_name);
        if (!n.ok()) return n.status();
        name = *n;
      } else if (!link.empty()) {
        auto n = ObjectNameOfLink(link);
        if (!n.ok()) return n.status();
        name = *n;
      } else {
        return Status::InvalidArgument("missing 'object_name' in the request body");
      }
      req.items.push_back({name, NormalizeLink(link)});
      break;
    }
    case DownloadType::kRange: {
      if (tmpl.empty()) return Status::InvalidArgument("missing 'template' in the request body");
      auto t = NameTemplate::Parse(tmpl);
      if (!t.ok()) return Status::InvalidArgument("template \"" + tmpl.substr(0, 128) + "\": " + t.status().message());
      if (t->ranges.empty()) {
        return Status::InvalidArgument("template \"" + tmpl.substr(0, 128) + "\" names no range (e.g. {0001..0999})");
      }
      if (t->Count() > kMaxRangeFiles) {
        return Status::InvalidArgument("template \"" + tmpl.substr(0, 128) + "\" names " + std::to_string(t->Count()) +
                                       " files, more than the " + std::to_string(kMaxRangeFiles) + " one job may hold");
      }
      req.tmpl = std::move(*t);
      req.tmpl_text = tmpl;
      while (req.subdir.ends_with('/')) req.subdir.pop_back();
      if (!req.subdir.empty()) {
        if (Status st = ValidateObjectName(req.subdir); !st.ok()) return Status::InvalidArgument("subdir: " + st.message());
      }
      break;
    }
    case DownloadType::kMulti:
      AIS_RETURN_IF_ERROR(DecodeObjects(objects, &req.items));
      break;
    case DownloadType::kBackend:
      break;
  }
  return req;
}

Result<AdminRequest> ParseAdminRequest(const nlohmann::json& body, bool require_id) {
  AdminRequest req;
  JsonFields f(body, "");
  f.Str("id", &req.id).Str("regex", &req.regex).Bool("only_active_tasks", &req.only_active);
  AIS_RETURN_IF_ERROR(f.Finish());
  if (!req.id.empty() && !req.regex.empty()) {
    return Status::InvalidArgument("regex \"" + req.regex.substr(0, 64) + "\" and job ID \"" + req.id.substr(0, 64) +
                                   "\" cannot be defined together (choose one or the other)");
  }
  if (!req.regex.empty()) {
    if (req.regex.size() > kMaxRegex) {
      return Status::InvalidArgument("regex: longer than " + std::to_string(kMaxRegex) + " characters");
    }
    try {
      std::regex re(req.regex, std::regex::extended);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("regex \"" + req.regex.substr(0, 64) + "\": " + e.what());
    }
  }
  if (req.id.empty() && require_id) return Status::InvalidArgument("UUID not specified");
  return req;
}

}  // namespace ais
