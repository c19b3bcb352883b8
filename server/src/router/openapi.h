// The OpenAPI 3.0.3 document of the REST API, printed from the route table (router/routes.h): one
// operation per row, its parameters, bodies, replies, the error documents (AIS error JSON under
// /v1, S3 XML under /s3) and the permission bits it needs (`x-ais-access`). Served at
// `GET /openapi.yaml`, printed by `aistore-server --print-openapi`, kept as docs/openapi.yaml.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ais::router {

nlohmann::json OpenApiDocument();

// `doc` as block YAML: maps and lists indented by two, every string double-quoted (JSON's
// escapes are YAML's), so it reads back to the same JSON. Deterministic (keys in the json's
// order).
std::string ToYaml(const nlohmann::json& doc);

// The document as ToYaml prints it (computed once).
const std::string& OpenApiYaml();

}  // namespace ais::router
