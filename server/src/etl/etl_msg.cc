#include "etl/etl_msg.h"

#include <cctype>

#include "util/json_fields.h"

namespace ais::etl {

namespace {

constexpr size_t kNameMin = 6, kNameMax = 32;

// [{"name": ..., "value": ...}, ...] at `key`.
void ReadEnv(JsonFields& f, std::string_view key, EnvList* out) {
  const nlohmann::json* raw = nullptr;
  f.Raw(key, &raw);
  if (!raw) return;
  if (!raw->is_array()) {
    f.Fail(key, "expecting an array of {\"name\", \"value\"}, got " + std::string(JsonTypeName(*raw)));
    return;
  }
  for (size_t i = 0; i < raw->size(); ++i) {
    std::string name, value;
    JsonFields e((*raw)[i], f.PathOf(key) + "[" + std::to_string(i) + "]");
    e.Str("name", &name).Str("value", &value);
    if (Status st = e.Finish(); !st.ok()) {
      f.Fail(key, st.message());
      return;
    }
    if (name.empty()) {
      f.Fail(key, "entry " + std::to_string(i) + " has no name");
      return;
    }
    out->emplace_back(std::move(name), std::move(value));
  }
}

}  // namespace

std::string_view CommTypeName(CommType c) {
  switch (c) {
    case CommType::kHpush: return "hpush://";
    case CommType::kHpull: return "hpull://";
    case CommType::kWs: return "ws://";
  }
  return "hpush://";
}

Status CheckEtlName(std::string_view name) {
  const std::string q = "ETL name \"" + std::string(name.substr(0, 64)) + "\" ";
  if (name.empty()) return Status::InvalidArgument(q + "is empty");
  if (name.size() < kNameMin) return Status::InvalidArgument(q + "is too short");
  if (name.size() > kNameMax) return Status::InvalidArgument(q + "is too long");
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return Status::InvalidArgument(q + "is invalid: can only contain [a-z0-9-]");
    }
  }
  return Status::OK();
}

nlohmann::json EtlSpec::ToJson() const {
  auto env_json = [](const EnvList& l) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& [k, v] : l) a.push_back({{"name", k}, {"value", v}});
    return a;
  };
  nlohmann::json runtime = {{"image", image}};
  if (!runtime_env.empty()) runtime["env"] = env_json(runtime_env);
  nlohmann::json j = {{"name", name},
                      {"communication", CommTypeName(comm)},
                      {"init_timeout", FormatGoDuration(init_timeout)},
                      {"obj_timeout", FormatGoDuration(obj_timeout)},
                      {"support_direct_put", support_direct_put},
                      {"runtime", runtime}};
  if (!env.empty()) j["env"] = env_json(env);
  return j;
}

Result<EtlSpec> ParseEtlSpec(const nlohmann::json& body) {
  EtlSpec s;
  std::string comm, init_timeout, obj_timeout;
  const nlohmann::json* resources = nullptr;
  const nlohmann::json* spec = nullptr;
  std::vector<std::string> command;
  JsonFields f(body, "");
  f.Str("name", &s.name)
      .Str("communication", &comm)
      .Str("init_timeout", &init_timeout)
      .Str("obj_timeout", &obj_timeout)
      .Bool("support_direct_put", &s.support_direct_put)
      .Raw("resources", &resources)
      .Raw("spec", &spec);
  ReadEnv(f, "env", &s.env);
  f.Object("runtime", [&](JsonFields& r) {
    r.Str("image", &s.image).StrList("command", &command);
    ReadEnv(r, "env", &s.runtime_env);
  });
  AIS_RETURN_IF_ERROR(f.Finish());
  AIS_RETURN_IF_ERROR(CheckEtlName(s.name));
  if (spec) {
    return Status::NotSupported("spec: a Kubernetes pod spec (ais etl init spec) cannot run here; "
                                "initialize the ETL from a class (Etl.init_class) or the official Python runtime image");
  }
  if (comm.empty() || comm == "hpush://") s.comm = CommType::kHpush;
  else if (comm == "hpull://") s.comm = CommType::kHpull;
  else if (comm == "ws://") s.comm = CommType::kWs;
  else return Status::InvalidArgument("unknown comm-type \"" + comm.substr(0, 64) + "\"");
  if (s.comm == CommType::kWs) {
    if (!s.support_direct_put) {
      return Status::InvalidArgument("ETL \"" + s.name + "\": WebSocket without direct put is not supported yet");
    }
  }
  for (auto [text, out, def] : {std::tuple{&init_timeout, &s.init_timeout, std::chrono::milliseconds(45'000)},
                                std::tuple{&obj_timeout, &s.obj_timeout, std::chrono::milliseconds(10'000)}}) {
    if (text->empty()) continue;
    auto d = ParseGoDuration(*text);
    if (!d.ok()) return Status::InvalidArgument(d.status().message());
    *out = d->count() == 0 ? def : *d;
  }
  if (s.image.empty()) return Status::InvalidArgument("runtime.image must be specified");
  if (!s.image.starts_with(kRuntimeImage)) {
    return Status::NotSupported(
        "runtime.image \"" + s.image.substr(0, 128) + "\": this server runs ETLs as local processes, not containers: "
        "only the official Python runtime (" + std::string(kRuntimeImage) +
        "<python version>, as Etl.init_class sends it) can run here");
  }
  s.runtime_python = s.image.substr(kRuntimeImage.size());
  if (!command.empty()) {
    return Status::NotSupported("runtime.command: the runtime's command cannot be replaced here (the class runs in "
                                "this server's Python runtime)");
  }
  if (resources && !(resources->is_object() && resources->empty())) {
    return Status::NotSupported("resources: Kubernetes resource requests and limits do not apply to local processes");
  }
  return s;
}

}  // namespace ais::etl
