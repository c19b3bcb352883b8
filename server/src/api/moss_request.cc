#include "api/moss_request.h"

#include "util/base64.h"

#include <array>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "store/names.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace ais {
namespace {

// The archpath rules: those of object names, except that one leading '/' is allowed and empty
// components are left to the archive (a member may be spelled "a//b").
Status ValidateArchpath(std::string_view p) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("invalid archpath \"" + std::string(p) + "\": " + std::string(why));
  };
  if (p.ends_with('/')) return bad("must not end with '/'");
  if (p.starts_with("~/")) return bad("must not start with '~/'");
  std::string_view body = p.starts_with('/') ? p.substr(1) : p;
  if (body.empty()) return bad("is empty");
  for (auto comp : Split(body, '/')) {
    if (comp == "." || comp == "..") return bad("'.' and '..' path components are not allowed");
  }
  for (unsigned char c : p) {
    if (c < 0x20 || c == 0x7f) return bad("control characters are not allowed");
  }
  return Status::OK();
}

}  // namespace

Result<std::string> NormalizeProvider(std::string_view provider) {
  // AIS's providers and their aliases ("ht" is none: the downloader's, not a bucket's).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kProviders = {{
      {"", "ais"}, {"ais", "ais"}, {"aws", "aws"},     {"s3", "aws"},  {"gcp", "gcp"},
      {"gs", "gcp"}, {"azure", "azure"}, {"az", "azure"}, {"oci", "oci"}, {"oc", "oci"},
  }};
  for (auto& [alias, canon] : kProviders) {
    if (provider == alias) return std::string(canon);
  }
  return Status::InvalidArgument("invalid backend provider \"" + std::string(provider.substr(0, 64)) +
                                 "\": must be one of [ais, aws (s3://), gcp (gs://), azure (az://), oci (oc://)]");
}

// SAX handler: fills a MossRequest without building a JSON document. Keys match
// case-insensitively (as Go's decoder does); an unknown key, a value of the wrong type or more
// items than the limit stop the parse with an error naming it.
class MossParser : public nlohmann::json_sax<nlohmann::json> {
 public:
  MossParser(MossRequest& req, const std::optional<MossBucket>& def, size_t max_items)
      : req_(req), default_(def), max_items_(max_items) {}

  Status status() const { return status_; }
  bool saw_root() const { return saw_root_; }

  bool null() override { return Scalar(Value{}); }
  bool boolean(bool v) override { return Scalar(Value{.kind = Value::kBool, .b = v}); }
  bool number_integer(number_integer_t v) override { return Scalar(Value{.kind = Value::kInt, .i = v}); }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Fail("number out of range");
    return Scalar(Value{.kind = Value::kInt, .i = static_cast<int64_t>(v)});
  }
  bool number_float(number_float_t, const string_t&) override { return Scalar(Value{.kind = Value::kFloat}); }
  bool string(string_t& v) override { return Scalar(Value{.kind = Value::kString, .s = &v}); }
  bool binary(binary_t&) override { return Fail("unexpected binary value"); }

  bool start_object(std::size_t) override {
    if (state_ == kStart) return state_ = kRoot, saw_root_ = true, true;
    if (state_ == kInArray) {
      state_ = kItem;
      cur_ = Pending{};
      return true;
    }
    return Skip();
  }
  bool end_object() override {
    if (state_ == kItem) {
      state_ = kInArray;
      return FinishItem();
    }
    if (state_ == kRoot) return state_ = kDone, true;
    return Fail("unexpected end of object");
  }
  bool start_array(std::size_t) override {
    if (state_ == kRoot && key_ == "in") return state_ = kInArray, saw_in_ = true, true;
    if (state_ == kStart) return Fail("request body must be a JSON object");
    return Skip();
  }
  bool end_array() override {
    if (state_ == kInArray) return state_ = kRoot, true;
    return Fail("unexpected end of array");
  }
  bool key(string_t& k) override {
    key_ = AsciiLower(k);
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception&) override {
    if (status_.ok()) status_ = Status::InvalidArgument("invalid JSON in request body at byte " + std::to_string(pos));
    return false;
  }

 private:
  struct Value {
    enum Kind { kNull, kBool, kInt, kFloat, kString } kind = kNull;
    bool b = false;
    int64_t i = 0;
    const std::string* s = nullptr;
  };
  struct Pending {
    std::string objname, bucket, provider, uname, archpath, opaque;
    bool has_provider = false;
    int64_t start = 0, length = 0;
  };
  enum State { kStart, kRoot, kInArray, kItem, kDone };

  // An object or array where none belongs: a wrong type or an unknown field.
  bool Skip() { return Fail("\"" + key_.substr(0, 64) + "\": unexpected object or array"); }
  bool Fail(std::string why) {
    if (status_.ok()) status_ = Status::InvalidArgument("invalid GetBatch request: " + why);
    return false;
  }
  bool WrongType(const char* key, const char* want) {
    return Fail(std::string("\"") + key + "\" must be " + want);
  }

  bool Scalar(const Value& v) {
    if (state_ == kStart) return Fail("request body must be a JSON object");
    if (state_ == kInArray) return Fail("\"in\" entries must be objects");
    if (state_ == kRoot) return RootField(v);
    if (state_ == kItem) return ItemField(v);
    return true;
  }

  bool RootField(const Value& v) {
    auto flag = [&](bool& out, const char* name) {
      if (v.kind == Value::kNull) return true;
      if (v.kind != Value::kBool) return WrongType(name, "a boolean");
      out = v.b;
      return true;
    };
    if (key_ == "mime") {
      if (v.kind == Value::kNull) return true;
      if (v.kind != Value::kString) return WrongType("mime", "a string");
      req_.mime = *v.s;
      return true;
    }
    if (key_ == "coer") return flag(req_.coer, "coer");
    if (key_ == "onob") return flag(req_.onob, "onob");
    if (key_ == "strm") return flag(req_.strm, "strm");
    if (key_ == "coloc") {
      if (v.kind == Value::kNull) return true;
      if (v.kind != Value::kInt || v.i < 0 || v.i > 255) return WrongType("coloc", "an integer 0..255");
      return true;  // a routing hint; one node has nothing to route
    }
    if (key_ == "in") return v.kind == Value::kNull || WrongType("in", "an array");
    return Fail("unknown field \"" + key_.substr(0, 64) + "\"");
  }

  bool ItemField(const Value& v) {
    auto str = [&](std::string& out, const char* name) {
      if (v.kind == Value::kNull) return true;
      if (v.kind != Value::kString) return WrongType(name, "a string");
      if (v.s->size() > DefaultJsonLimits().max_string) {
        return Fail(std::string("\"") + name + "\" is over the limit of " +
                    std::to_string(DefaultJsonLimits().max_string) + " bytes");
      }
      out = *v.s;
      return true;
    };
    auto num = [&](int64_t& out, const char* name) {
      if (v.kind == Value::kNull) return true;
      if (v.kind != Value::kInt) return WrongType(name, "an integer");
      out = v.i;
      return true;
    };
    if (key_ == "objname") return str(cur_.objname, "objname");
    if (key_ == "bucket") return str(cur_.bucket, "bucket");
    if (key_ == "provider") {
      cur_.has_provider = v.kind == Value::kString;
      return str(cur_.provider, "provider");
    }
    if (key_ == "uname") return str(cur_.uname, "uname");
    if (key_ == "archpath") return str(cur_.archpath, "archpath");
    if (key_ == "opaque") return str(cur_.opaque, "opaque");
    if (key_ == "start") return num(cur_.start, "start");
    if (key_ == "length") return num(cur_.length, "length");
    return Fail("unknown field \"in[]." + key_.substr(0, 64) + "\"");
  }

  Result<uint32_t> BucketIndex(MossBucket b) {
    for (size_t i = 0; i < req_.buckets.size(); ++i) {
      if (req_.buckets[i] == b) return static_cast<uint32_t>(i);
    }
    AIS_RETURN_IF_ERROR(ValidateBucketName(b.name));
    req_.buckets.push_back(std::move(b));
    return static_cast<uint32_t>(req_.buckets.size() - 1);
  }

  // "<provider>/<ns>/<bucket>/" with the global namespace "@#" (or none).
  Result<MossBucket> ParseUname(const std::string& uname) {
    auto bad = [&] { return Status::InvalidArgument("invalid uname \"" + uname + "\" (expecting PROVIDER/@#/BUCKET/)"); };
    auto parts = Split(uname, '/');
    if (parts.size() != 4 || !parts[3].empty()) return bad();
    if (!parts[1].empty() && parts[1] != "@#") {
      return Status::NotSupported("bucket namespaces are not supported by this server (uname \"" + uname + "\")");
    }
    auto prov = NormalizeProvider(parts[0]);
    if (!prov.ok()) return prov.status();
    if (parts[2].empty()) return bad();
    return MossBucket{.provider = *prov, .name = std::string(parts[2])};
  }

  bool FinishItem() {
    Pending& p = cur_;
    if (Status st = ValidateObjectName(p.objname); !st.ok()) return SetStatus(st);
    MossBucket bck;
    if (!p.uname.empty()) {
      auto b = ParseUname(p.uname);
      if (!b.ok()) return SetStatus(b.status());
      bck = std::move(*b);
    } else if (!p.bucket.empty()) {
      auto prov = NormalizeProvider(p.provider);
      if (!prov.ok()) return SetStatus(prov.status());
      bck = MossBucket{.provider = *prov, .name = p.bucket};
    } else if (default_) {
      bck = *default_;
    } else {
      return SetStatus(Status::InvalidArgument("missing bucket specification for object \"" + p.objname + "\""));
    }
    if (!p.archpath.empty()) {
      if (Status st = ValidateArchpath(p.archpath); !st.ok()) return SetStatus(st);
    }
    // Parse-time range rules (apc.MossIn): start >= 0, length >= -1, a non-zero start needs a length.
    if (p.start < 0 || p.length < -1 || (p.start != 0 && p.length == 0)) {
      return SetStatus(Status::InvalidArgument("not satisfiable range [start=" + std::to_string(p.start) +
                                               ",length=" + std::to_string(p.length) + " (oname: \"" +
                                               p.objname + "\")]"));
    }
    std::string opaque;
    if (!p.opaque.empty()) {
      auto dec = DecodeBase64(p.opaque);
      if (!dec) return SetStatus(Status::InvalidArgument("invalid base64 in \"opaque\" of object \"" + p.objname + "\""));
      opaque = std::move(*dec);
    }
    auto idx = BucketIndex(std::move(bck));
    if (!idx.ok()) return SetStatus(idx.status());
    if (req_.arena_.size() + p.objname.size() + p.archpath.size() + opaque.size() > UINT32_MAX) {
      return Fail("request too large");
    }
    if (req_.items.size() >= max_items_) {
      return Fail("more than " + std::to_string(max_items_) + " items in one request (the server's limit)");
    }
    MossItem item;
    item.bucket = *idx;
    item.objname = req_.Put(p.objname);
    item.archpath = req_.Put(p.archpath);
    item.opaque = req_.Put(opaque);
    item.start = p.start;
    item.length = p.length;
    req_.items.push_back(item);
    return true;
  }

  bool SetStatus(Status st) {
    if (status_.ok()) status_ = std::move(st);
    return false;
  }

  MossRequest& req_;
  const std::optional<MossBucket>& default_;
  const size_t max_items_;
  State state_ = kStart;
  std::string key_;
  Pending cur_;
  Status status_;
  bool saw_root_ = false;
  bool saw_in_ = false;
};

ArenaRef MossRequest::Put(std::string_view s) {
  ArenaRef r{static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(s.size())};
  arena_.append(s);
  return r;
}

void MossRequest::AddItem(uint32_t bucket, std::string_view objname, std::string_view archpath) {
  MossItem item;
  item.bucket = bucket;
  item.objname = Put(objname);
  item.archpath = Put(archpath);
  items.push_back(item);
}

Result<MossRequest> ParseMossRequest(std::string_view body, const std::optional<MossBucket>& default_bucket,
                                     size_t max_items) {
  MossRequest req;
  MossParser parser(req, default_bucket, max_items);
  bool ok = nlohmann::json::sax_parse(body.begin(), body.end(), &parser);
  if (!parser.status().ok()) return parser.status();
  if (!ok || !parser.saw_root()) return Status::InvalidArgument("invalid JSON in request body");
  if (req.items.empty()) return Status::InvalidArgument("moss: empty input");
  req.items.shrink_to_fit();
  return req;
}

}  // namespace ais
