#include "util/json_fields.h"

#include "util/strings.h"

namespace ais {

JsonLimits& DefaultJsonLimits() {
  static JsonLimits limits;
  return limits;
}

Result<nlohmann::json> ParseJson(std::string_view text, const JsonLimits& limits) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return nlohmann::json::object();
  bool too_deep = false;
  // The callback sees every value as it is parsed; a container opened past the limit is
  // discarded whole (nothing of it is built) and the parse is then refused.
  auto cb = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        static_cast<size_t>(depth) >= limits.max_depth) {
      too_deep = true;
      return false;
    }
    return !too_deep;
  };
  auto j = nlohmann::json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (too_deep) {
    return Status::InvalidArgument("JSON in request body is nested deeper than " + std::to_string(limits.max_depth) +
                                   " levels");
  }
  if (j.is_discarded()) return Status::InvalidArgument("invalid JSON in request body");
  return j;
}

std::string_view JsonTypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number with a fraction";
    default: return "invalid value";
  }
}

JsonFields::JsonFields(const nlohmann::json& j, std::string path, const JsonLimits& limits)
    : obj_(j.is_object() ? &j : nullptr), path_(std::move(path)), limits_(limits) {
  if (obj_ != nullptr) {
    used_.assign(obj_->size(), false);
  } else if (!j.is_null() || path_.empty()) {  // a body must be an object; a null field reads as {}
    status_ = Status::InvalidArgument((path_.empty() ? std::string("request body") : "\"" + path_ + "\"") +
                                      " must be a JSON object, not " + std::string(JsonTypeName(j)));
  }
}

std::string JsonFields::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const nlohmann::json* JsonFields::Find(std::string_view key) {
  if (!status_.ok() || obj_ == nullptr) return nullptr;
  // An exact match wins; else the first case-insensitive one (Go's rule for struct fields).
  size_t i = 0, fold = used_.size();
  const nlohmann::json* found = nullptr;
  for (auto it = obj_->begin(); it != obj_->end(); ++it, ++i) {
    if (it.key() == key) {
      fold = i;
      found = &it.value();
      break;
    }
    if (found == nullptr && IEquals(it.key(), key)) {
      fold = i;
      found = &it.value();
    }
  }
  if (found == nullptr) return nullptr;
  used_[fold] = true;
  return found->is_null() ? nullptr : found;
}

JsonFields& JsonFields::Fail(std::string_view key, const std::string& why) {
  if (status_.ok()) status_ = Status::InvalidArgument("invalid \"" + PathOf(key) + "\": " + why);
  return *this;
}

JsonFields& JsonFields::TypeError(std::string_view key, const nlohmann::json& v, std::string_view expected) {
  return Fail(key, "expecting " + std::string(expected) + ", got " + std::string(JsonTypeName(v)));
}

JsonFields& JsonFields::Str(std::string_view key, std::string* out) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_string()) return TypeError(key, *v, "a string");
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > limits_.max_string) {
    return Fail(key, "string of " + std::to_string(s.size()) + " bytes is over the limit of " +
                         std::to_string(limits_.max_string));
  }
  *out = s;
  return *this;
}

JsonFields& JsonFields::Bool(std::string_view key, bool* out) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_boolean()) return TypeError(key, *v, "a boolean");
  *out = v->get<bool>();
  return *this;
}

JsonFields& JsonFields::OptBool(std::string_view key, std::optional<bool>* out) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_boolean()) return TypeError(key, *v, "a boolean");
  *out = v->get<bool>();
  return *this;
}

JsonFields& JsonFields::Int(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  auto range = [&] { return "[" + std::to_string(min) + ", " + std::to_string(max) + "]"; };
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (max < 0 || u > static_cast<uint64_t>(max)) return Fail(key, v->dump() + " is out of range " + range());
    *out = static_cast<int64_t>(u);
    return *this;
  }
  if (!v->is_number_integer()) return TypeError(key, *v, "an integer");
  int64_t n = v->get<int64_t>();
  if (n < min || n > max) return Fail(key, v->dump() + " is out of range " + range());
  *out = n;
  return *this;
}

JsonFields& JsonFields::Uint(std::string_view key, uint64_t* out, uint64_t max) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_number_integer()) return TypeError(key, *v, "a non-negative integer");
  if (!v->is_number_unsigned() && v->get<int64_t>() < 0) return Fail(key, v->dump() + " is negative");
  uint64_t u = v->get<uint64_t>();
  if (u > max) return Fail(key, v->dump() + " is over the limit of " + std::to_string(max));
  *out = u;
  return *this;
}

JsonFields& JsonFields::Size(std::string_view key, uint64_t* out) {
  const nlohmann::json* v = Find(key);
  return v == nullptr ? *this : SizeOf(key, *v, out);
}

JsonFields& JsonFields::Size(std::string_view key, std::optional<uint64_t>* out) {
  const nlohmann::json* v = Find(key);
  uint64_t n = 0;
  if (v != nullptr && SizeOf(key, *v, &n).ok()) *out = n;
  return *this;
}

JsonFields& JsonFields::SizeOf(std::string_view key, const nlohmann::json& v, uint64_t* out) {
  if (v.is_string()) {
    auto n = ParseIecSize(v.get_ref<const std::string&>());
    if (!n) return Fail(key, "invalid size " + v.dump().substr(0, 64) + " (expecting bytes or an IEC size such as \"8MiB\")");
    *out = *n;
    return *this;
  }
  if (!v.is_number_integer()) return TypeError(key, v, "a size (integer or string)");
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return Fail(key, v.dump().substr(0, 64) + " is negative");
  *out = v.get<uint64_t>();
  return *this;
}

JsonFields& JsonFields::StrList(std::string_view key, std::vector<std::string>* out) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_array()) return TypeError(key, *v, "an array of strings");
  if (v->size() > limits_.max_array) {
    return Fail(key, std::to_string(v->size()) + " items are over the limit of " + std::to_string(limits_.max_array));
  }
  std::vector<std::string> list;
  list.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& item = (*v)[i];
    std::string at = std::string(key) + "[" + std::to_string(i) + "]";
    if (!item.is_string()) return TypeError(at, item, "a string");
    if (item.get_ref<const std::string&>().size() > limits_.max_string) {
      return Fail(at, "string is over the limit of " + std::to_string(limits_.max_string) + " bytes");
    }
    list.push_back(item.get<std::string>());
  }
  *out = std::move(list);
  return *this;
}

JsonFields& JsonFields::StrMap(std::string_view key, std::vector<std::pair<std::string, std::string>>* out) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_object()) return TypeError(key, *v, "an object of strings");
  std::vector<std::pair<std::string, std::string>> map;
  for (auto it = v->begin(); it != v->end(); ++it) {
    std::string at = std::string(key) + "." + it.key();
    if (!it.value().is_string()) return TypeError(at, it.value(), "a string");
    if (it.key().size() > limits_.max_string || it.value().get_ref<const std::string&>().size() > limits_.max_string) {
      return Fail(at, "string is over the limit of " + std::to_string(limits_.max_string) + " bytes");
    }
    map.emplace_back(it.key(), it.value().get<std::string>());
  }
  *out = std::move(map);
  return *this;
}

JsonFields& JsonFields::Object(std::string_view key, const std::function<void(JsonFields&)>& read) {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return *this;
  if (!v->is_object()) return TypeError(key, *v, "an object");
  JsonFields nested(*v, PathOf(key), limits_);
  read(nested);
  Status st = nested.Finish();
  if (!st.ok() && status_.ok()) status_ = std::move(st);
  return *this;
}

JsonFields& JsonFields::Raw(std::string_view key, const nlohmann::json** out) {
  const nlohmann::json* v = Find(key);
  if (v != nullptr) *out = v;
  return *this;
}

JsonFields& JsonFields::Unused(Kind kind, std::initializer_list<std::string_view> keys) {
  for (auto key : keys) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) continue;
    switch (kind) {
      case Kind::kString:
        if (!v->is_string()) return TypeError(key, *v, "a string");
        if (v->get_ref<const std::string&>().size() > limits_.max_string) {
          return Fail(key, "string is over the limit of " + std::to_string(limits_.max_string) + " bytes");
        }
        break;
      case Kind::kBool:
        if (!v->is_boolean()) return TypeError(key, *v, "a boolean");
        break;
      case Kind::kInt:
        if (!v->is_number_integer()) return TypeError(key, *v, "an integer");
        break;
      case Kind::kObject:
        if (!v->is_object()) return TypeError(key, *v, "an object");
        break;
      case Kind::kArray:
        if (!v->is_array()) return TypeError(key, *v, "an array");
        break;
      case Kind::kAny: break;
    }
  }
  return *this;
}

Status JsonFields::Finish() {
  if (!status_.ok() || obj_ == nullptr) return status_;
  size_t i = 0;
  for (auto it = obj_->begin(); it != obj_->end(); ++it, ++i) {
    if (!used_[i]) {
      std::string key = it.key().size() > 64 ? it.key().substr(0, 64) + "..." : it.key();
      return Status::InvalidArgument("unknown field \"" + PathOf(key) + "\"");
    }
  }
  return Status::OK();
}

}  // namespace ais
