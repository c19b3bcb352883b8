// The ETL wire types (spec etl.md §2.1, §11): the init message (AIS ETLSpecMsg) as this server
// takes it, and ETL names. No I/O.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/go_duration.h"
#include "util/status.h"

namespace ais::etl {

// How the server hands an object to the transformer (AIS "communication").
enum class CommType { kHpush, kHpull, kWs };
std::string_view CommTypeName(CommType c);  // "hpush://", as the init message spells it

using EnvList = std::vector<std::pair<std::string, std::string>>;  // [{"name","value"}] in order

// The official Python runtime image's name prefix: its class payload runs here as a local process.
inline constexpr std::string_view kRuntimeImage = "aistorage/runtime_python:";

struct EtlSpec {
  std::string name;
  CommType comm = CommType::kHpush;
  std::chrono::milliseconds init_timeout{45'000};  // AIS's server defaults (the SDK sends 5m / 45s)
  std::chrono::milliseconds obj_timeout{10'000};
  bool support_direct_put = false;
  std::string image;        // runtime.image
  EnvList runtime_env;      // runtime.env
  EnvList env;              // the top-level env, added after runtime.env
  std::string runtime_python;  // "3.11" of kRuntimeImage + "3.11"

  // The stored init message, defaults filled in (what GET /v1/etl/NAME shows as init_msg).
  nlohmann::json ToJson() const;
};

// AIS's name check (cmn/k8s): 6..32 characters of [a-z0-9-]; kInvalidArgument saying what is wrong.
Status CheckEtlName(std::string_view name);

// Decodes and checks an init message. Refused (kInvalidArgument, or kNotSupported for what AIS
// has and this server cannot do, naming the field): an image other than the official Python
// runtime (it runs as a local process here; no container engine), runtime.command, resources,
// the deprecated pod spec, unknown keys, a bad name, comm type or duration, ws:// without direct put.
Result<EtlSpec> ParseEtlSpec(const nlohmann::json& body);

}  // namespace ais::etl
