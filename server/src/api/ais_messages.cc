#include "api/ais_messages.h"

#include "api/moss_request.h"  // NormalizeProvider
#include "store/names.h"

namespace ais {

Result<ActionMsg> ActionMsg::Decode(const nlohmann::json& body) {
  ActionMsg m;
  const nlohmann::json* value = nullptr;
  JsonFields f(body, "");
  f.Str("action", &m.action).Str("name", &m.name).Raw("value", &value);
  AIS_RETURN_IF_ERROR(f.Finish());
  if (value != nullptr) m.value = *value;
  return m;
}

Status ActionMsg::CheckNoValue() const {
  JsonFields f(value, "value");
  return f.Finish();
}

void BucketRef::Read(JsonFields& f) {
  f.Str("name", &name).Str("provider", &provider).Object("namespace", [this](JsonFields& ns) {
    ns.Str("uuid", &ns_uuid).Str("name", &ns_name);
  });
  // cmn.Bck also carries "props" (BucketProps) in some messages: accepted, not used.
  f.Unused(JsonFields::Kind::kObject, {"props"});
}

Status BucketRef::CheckServed(std::string_view what) const {
  auto canonical = NormalizeProvider(provider);  // not a provider at all: a bad request (400)
  if (!canonical.ok()) return Status::InvalidArgument(std::string(what) + ": " + canonical.status().message());
  if (*canonical != "ais") {
    return Status::NotSupported(std::string(what) + ": provider \"" + provider +
                                "\" is not served by this single-node server (only \"ais\")");
  }
  if (!ns_uuid.empty()) {
    return Status::NotSupported(std::string(what) + ": buckets of remote AIS clusters (@" + ns_uuid +
                                ") are not supported here");
  }
  return ValidateNamespace(ns());
}

Result<std::string> BucketRef::Key(std::string_view what) const {
  auto provider = NormalizeProvider(this->provider);
  if (!name.empty() && provider.ok() && IsServedCloud(*provider) && ns_uuid.empty() && ns_name.empty()) {
    AIS_RETURN_IF_ERROR(ValidateBucketName(name));
    return BucketKey(*provider, name);
  }
  AIS_RETURN_IF_ERROR(CheckServed(what));
  if (name.empty()) return std::string();
  AIS_RETURN_IF_ERROR(ValidateBucketName(name));
  return BucketKey(kProviderAis, ns(), name);
}

namespace {

// "buckets": [cmn.Bck, ...]
void ReadBuckets(JsonFields& f, std::vector<BucketRef>* out) {
  const nlohmann::json* list = nullptr;
  f.Raw("buckets", &list);
  if (list == nullptr || !f.ok()) return;
  if (!list->is_array()) {
    f.Fail("buckets", "expecting an array of buckets, got " + std::string(JsonTypeName(*list)));
    return;
  }
  for (size_t i = 0; i < list->size() && f.ok(); ++i) {
    std::string at = "buckets[" + std::to_string(i) + "]";
    JsonFields b((*list)[i], f.PathOf(at));
    BucketRef ref;
    ref.Read(b);
    if (Status st = b.Finish(); !st.ok()) {
      f.Fail(at, st.message());
      return;
    }
    out->push_back(std::move(ref));
  }
}

}  // namespace

Result<XactMsg> XactMsg::Decode(const nlohmann::json& j, std::string path) {
  // The union of QueryMsg and ArgsMsg keys: the official SDK sends ArgsMsg's keys ("ID", "Kind",
  // "DaemonID", "Bck", "Buckets") to the query endpoints too, and Go ignores what it lacks.
  XactMsg m;
  JsonFields f(j, std::move(path));
  bool only_running = false;
  f.Str("id", &m.id).Str("kind", &m.kind).Str("node", &m.node).Str("DaemonID", &m.node);
  f.OptBool("show_active", &m.show_active).Bool("OnlyRunning", &only_running);
  f.Bool("Force", &m.force).Int("Timeout", &m.timeout);
  f.Object("bck", [&m](JsonFields& b) { m.bck.Read(b); });
  ReadBuckets(f, &m.buckets);
  AIS_RETURN_IF_ERROR(f.Finish());
  if (only_running && !m.show_active) m.show_active = true;
  return m;
}

void CopyMsg::Read(JsonFields& f) {
  f.Str("prefix", &prefix).Str("prepend", &prepend).Bool("dry_run", &dry_run).Bool("coer", &continue_on_err);
  f.StrMap("ext", &ext);
  f.Bool("latest-ver", &latest).Bool("synchronize", &sync).Int("num-workers", &num_workers, -1, 1024);
  f.Str("id", &etl_name).StrList("pipeline", &pipeline);
  // AIS fields without meaning on one node: accepted, not used ("request_timeout" AIS does not use either).
  f.Unused(JsonFields::Kind::kBool, {"force", "non-recurs"});
  f.Unused(JsonFields::Kind::kAny, {"request_timeout"});
}

Result<CopyMsg> CopyMsg::Decode(const nlohmann::json& value) {
  CopyMsg m;
  JsonFields f(value, "value");
  m.Read(f);
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<MultiObjMsg> MultiObjMsg::Decode(const std::string& action, const nlohmann::json& value) {
  MultiObjMsg m;
  JsonFields f(value, "value");
  f.Str("template", &m.tmpl).StrList("objnames", &m.objnames).Bool("coer", &m.continue_on_err);
  f.Int("num-workers", &m.num_workers, -1, 1024).Unused(JsonFields::Kind::kBool, {"non-recurs"});
  f.Unused(JsonFields::Kind::kString, {"TxnUUID"});
  if (action == "prefetch-listrange") {
    f.Bool("latest-ver", &m.latest).Size("blob-threshold", &m.blob_threshold).Size("blob-chunk-size", &m.blob_chunk_size);
    f.Int("blob-num-workers", &m.blob_workers, -1, 128);
  } else if (action == "copy-listrange" || action == "etl-listrange") {
    f.Object("tobck", [&m](JsonFields& b) { m.to_bck.Read(b); });
    m.copy.Read(f);
    m.continue_on_err = m.continue_on_err || m.copy.continue_on_err;
  } else if (action == "archive") {
    f.Object("tobck", [&m](JsonFields& b) { m.to_bck.Read(b); });
    f.Str("archname", &m.archname).Str("mime", &m.mime).Bool("isbn", &m.include_src_bucket).Bool("aate", &m.append);
    f.Unused(JsonFields::Kind::kBool, {"bnonly"});
  }
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<SummaryMsg> SummaryMsg::Decode(const nlohmann::json& value) {
  SummaryMsg m;
  JsonFields f(value, "value");
  f.Str("uuid", &m.uuid).Str("prefix", &m.prefix).Unused(JsonFields::Kind::kBool, {"cached", "present", "dont_add_remote"});
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<PromoteMsg> PromoteMsg::Decode(const nlohmann::json& value) {
  PromoteMsg m;
  JsonFields f(value, "value");
  f.Str("src", &m.src).Str("obj", &m.obj).Bool("rcr", &m.recursive).Bool("ovw", &m.overwrite);
  f.Bool("dls", &m.delete_src).Unused(JsonFields::Kind::kString, {"tid"}).Unused(JsonFields::Kind::kBool, {"notshr"});
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<RechunkMsg> RechunkMsg::Decode(const nlohmann::json& value) {
  RechunkMsg m;
  JsonFields f(value, "value");
  // Sizes: bytes (AIS sends int64) or an IEC string; a negative limit is refused, not read as 0.
  f.Size("objsize-limit", &m.objsize_limit).Size("chunk-size", &m.chunk_size).Str("prefix", &m.prefix);
  f.Unused(JsonFields::Kind::kBool, {"sync-remote"});
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<BlobMsg> BlobMsg::Decode(const nlohmann::json& value) {
  BlobMsg m;
  JsonFields f(value, "value");
  f.Size("chunk-size", &m.chunk_size).Int("num-workers", &m.num_workers, -1, 1024).Bool("latest-ver", &m.latest);
  AIS_RETURN_IF_ERROR(f.Finish());
  return m;
}

Result<std::vector<uint32_t>> DecodeMptParts(const nlohmann::json& value, uint32_t max) {
  if (!value.is_array()) {
    return Status::InvalidArgument("invalid \"value\": mpt-complete expects a list of parts, not " +
                                   std::string(JsonTypeName(value)));
  }
  std::vector<uint32_t> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = "value[" + std::to_string(i) + "]";
    int64_t n = 0;
    JsonFields f(value[i], at);
    f.Int("part-number", &n, 1, max).Unused(JsonFields::Kind::kString, {"etag"});
    AIS_RETURN_IF_ERROR(f.Finish());
    if (n == 0) return Status::InvalidArgument("invalid \"" + at + ".part-number\": required");
    out.push_back(static_cast<uint32_t>(n));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> DecodeCustomMd(const nlohmann::json& value) {
  if (!value.is_object()) {
    return Status::InvalidArgument("invalid \"value\": custom metadata must be a JSON object of strings, not " +
                                   std::string(JsonTypeName(value)));
  }
  std::vector<std::pair<std::string, std::string>> md;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key().empty()) return Status::InvalidArgument("invalid \"value\": custom metadata keys must be non-empty");
    if (!it.value().is_string()) {
      return Status::InvalidArgument("invalid \"value." + it.key().substr(0, 64) + "\": expecting a string, got " +
                                     std::string(JsonTypeName(it.value())));
    }
    md.emplace_back(it.key(), it.value().get<std::string>());
  }
  return md;
}

}  // namespace ais
