#include "router/openapi.h"

#include <cctype>

#include "router/routes.h"

namespace ais::router {
namespace {

using json = nlohmann::json;

json Ref(std::string_view name) { return {{"$ref", "#/components/schemas/" + std::string(name)}}; }

json StringProp(std::string_view description) { return {{"type", "string"}, {"description", description}}; }

// The wire types' schemas. Each mirrors its decoder or encoder (named in the description): the
// JsonFields calls that read a request body, the json a reply is built from.
json Schemas() {
  json s;
  s["AisError"] = {
      {"type", "object"},
      {"description", "the AIS error document of every /v1 error (http/exchange.cc AisErrorText); a HEAD reply "
                      "carries it in the Hdr-Error header"},
      {"required", {"message", "status"}},
      {"properties",
       {{"message", StringProp("what went wrong")},
        {"method", StringProp("the request's method")},
        {"url_path", StringProp("the request's path")},
        {"remote_addr", StringProp("the client's address")},
        {"caller", StringProp("always empty here")},
        {"node", StringProp("the answering node's ID")},
        {"status", {{"type", "integer"}, {"description", "the HTTP status"}}},
        {"tcode", StringProp("AIS error type, e.g. ErrBckNotFound")}}}};
  s["S3Error"] = {{"type", "object"},
                  {"description", "the S3 error document of every /s3 error (s3/errors.cc)"},
                  {"xml", {{"name", "Error"}}},
                  {"properties",
                   {{"Code", StringProp("S3 error code, e.g. NoSuchKey, NoSuchBucket, AccessDenied")},
                    {"Message", StringProp("what went wrong")},
                    {"Resource", StringProp("the request's path")},
                    {"RequestId", StringProp("also in x-amz-request-id")}}}};
  s["ActionMsg"] = {{"type", "object"},
                    {"description", "AIS action message (api/ais_messages.h ActionMsg); each operation lists its actions"},
                    {"required", {"action"}},
                    {"properties",
                     {{"action", StringProp("the action")},
                      {"name", StringProp("the action's name argument (e.g. the new name of rename-obj)")},
                      {"value", {{"description", "the action's argument, of a type per action"}}}}}};
  s["QueryMsg"] = {{"type", "object"},
                   {"description", "job query (api/ais_messages.h XactMsg): keys matched case-insensitively"},
                   {"properties",
                    {{"id", StringProp("job ID")},
                     {"kind", StringProp("job kind, e.g. copy-bck")},
                     {"bck", Ref("Bck")},
                     {"show_active", {{"type", "boolean"}, {"nullable", true}}}}}};
  s["Bck"] = {{"type", "object"},
              {"description", "cmn.Bck (api/ais_messages.h BucketRef)"},
              {"required", {"name"}},
              {"properties",
               {{"name", StringProp("bucket name")},
                {"provider", StringProp("ais or aws")},
                {"namespace",
                 {{"type", "object"}, {"properties", {{"uuid", StringProp("")}, {"name", StringProp("")}}}}}}}};
  s["BucketList"] = {{"type", "array"}, {"items", Ref("Bck")}};
  s["LsoEntry"] = {{"type", "object"},
                   {"properties",
                    {{"name", StringProp("object name")},
                     {"size", {{"type", "integer"}}},
                     {"checksum", StringProp("")},
                     {"atime", StringProp("")},
                     {"version", StringProp("")},
                     {"location", StringProp("")},
                     {"custom-md", {{"type", "object"}}},
                     {"copies", {{"type", "integer"}}},
                     {"flags", {{"type", "integer"}}}}}};
  s["LsoRes"] = {{"type", "object"},
                 {"description", "a list-objects page (api/object_list.h); msgpack with Accept: application/msgpack"},
                 {"properties",
                  {{"uuid", StringProp("listing session ID (never empty)")},
                   {"continuation_token", StringProp("next page's token; empty on the last page")},
                   {"entries", {{"type", "array"}, {"items", Ref("LsoEntry")}}},
                   {"flags", {{"type", "integer"}}}}}};
  s["MossIn"] = {{"type", "object"},
                 {"required", {"objname"}},
                 {"properties",
                  {{"objname", StringProp("object name")},
                   {"bucket", StringProp("bucket (default: the path's)")},
                   {"provider", StringProp("ais or aws")},
                   {"uname", StringProp("bucket/object as one name")},
                   {"archpath", StringProp("a file inside the object")},
                   {"opaque", StringProp("echoed back")},
                   {"start", {{"type", "integer"}}},
                   {"length", {{"type", "integer"}}}}}};
  s["MossReq"] = {{"type", "object"},
                  {"description", "GetBatch request (api/moss_request.h)"},
                  {"required", {"in"}},
                  {"properties",
                   {{"in", {{"type", "array"}, {"items", Ref("MossIn")}}},
                    {"mime", StringProp("output format: .tar (default), .tgz, .zip, .tar.lz4")},
                    {"coer", {{"type", "boolean"}, {"description", "continue on error"}}},
                    {"onob", {{"type", "boolean"}, {"description", "only object names in the archive"}}},
                    {"strm", {{"type", "boolean"}, {"description", "stream (else multipart: MossResp + archive)"}}},
                    {"coloc", {{"type", "integer"}}}}}};
  s["AuthnServerConf"] = {{"type", "object"},
                          {"description", "what AuthN sends when it registers a cluster"},
                          {"additionalProperties", true}};
  s["TokenList"] = {{"type", "object"},
                    {"properties",
                     {{"tokens", {{"type", "array"}, {"items", {{"type", "string"}}}}}, {"version", StringProp("")}}}};
  s["AnyJson"] = {{"description", "JSON; its shape depends on the query (docs and ../shared/spec)"}};
  s["PrometheusText"] = {{"type", "string"}, {"description", "Prometheus text exposition format 0.0.4"}};
  s["OpenApiDocument"] = {{"type", "object"}};
  s["S3Xml"] = {{"type", "string"}, {"description", "the S3 XML document of the operation"}};
  return s;
}

json ParamJson(const Param& p, std::string_view in) {
  json j = {{"name", p.name}, {"in", in}, {"schema", {{"type", p.type}}}};
  if (!p.description.empty()) j["description"] = p.description;
  if (p.required) j["required"] = true;
  return j;
}

std::string OperationId(const RouteSpec& r) {
  std::string id(MethodName(r.method));
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char c : r.path) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      id.push_back(c);
    } else if (id.back() != '_') {
      id.push_back('_');
    }
  }
  while (id.back() == '_') id.pop_back();
  return id;
}

json Operation(const RouteSpec& r) {
  const bool s3 = r.area == "s3";
  json op = {{"operationId", OperationId(r)}, {"summary", r.summary}};
  op["tags"] = {r.area.empty() ? "observability" : std::string(r.area)};
  if (!r.description.empty()) op["description"] = r.description;
  json params = json::array();
  // Path parameters, from the template.
  for (size_t i = r.path.find('{'); i != std::string_view::npos; i = r.path.find('{', i + 1)) {
    std::string name(r.path.substr(i + 1, r.path.find('}', i) - i - 1));
    std::string desc = name == "object" || name == "key" ? "the name, '/' included (the rest of the path)"
                                                          : "bucket name";
    if (name == "prefix") desc = "object name prefix (the rest of the path)";
    params.push_back({{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}},
                      {"description", desc}});
  }
  for (const Param& p : r.query) params.push_back(ParamJson(p, "query"));
  for (const Param& p : r.headers) {
    if (p.name == "Authorization" || p.name == "Accept" || p.name == "Content-Type") continue;  // OpenAPI: not parameters
    params.push_back(ParamJson(p, "header"));
  }
  if (!params.empty()) op["parameters"] = params;

  // Access.
  if (r.open) {
    op["security"] = json::array();
  } else {
    op["security"] = {{{"bearerAuth", json::array()}}, json::object()};  // the token, when tokens are required
  }
  json access = {{"open", r.open}};
  if (!r.open) {
    if (r.bits) access["bits"] = auth::AccessNames(r.bits);
    access["scope"] = r.on_bucket ? "bucket" : "cluster";
    if (r.by_action) access["by_action"] = true;
    if (!r.bits_query.empty()) access["with_" + std::string(r.bits_query)] = auth::AccessNames(r.bits_query_bits);
  }
  op["x-ais-access"] = access;
  // Dispatch: which buckets a bucket route serves (an ais:// one, a remote one), and the values
  // of a `what` query.
  auto kinds = [](const Serve& serve) {
    json k = json::array();
    if (serve.local) k.push_back("ais");
    if (serve.remote) k.push_back("remote");
    return k;
  };
  if (r.on_bucket && r.actions.empty()) op["x-ais-buckets"] = kinds(r.serve);
  if (!r.what.empty()) {
    json what = json::array();
    for (const WhatValue& w : r.what) what.push_back({{"what", w.name}, {"summary", w.summary}});
    op["x-ais-what"] = what;
  }

  // Request body.
  if (!r.request_type.empty()) {
    json schema;
    bool required = r.method != Method::kGet;
    if (r.request_schema == "ActionMsg" && !r.actions.empty()) {
      json names = json::array();
      json actions = json::array();
      for (const Action& a : r.actions) {
        if (a.name.empty()) {
          required = false;  // no body is an action too
          continue;
        }
        names.push_back(a.name);
        actions.push_back({{"action", a.name}, {"summary", a.summary}, {"access", auth::AccessNames(a.bits)}});
        if (r.on_bucket) actions.back()["buckets"] = kinds(a.serve);
      }
      schema = names.empty() ? Ref("ActionMsg")  // only the empty action
                             : json{{"allOf", {Ref("ActionMsg"), {{"type", "object"},
                                                                 {"properties", {{"action", {{"type", "string"}, {"enum", names}}}}}}}}};
      op["x-ais-actions"] = actions;
    } else if (!r.request_schema.empty()) {
      schema = Ref(r.request_schema);
    } else if (r.request_type == "application/octet-stream") {
      schema = {{"type", "string"}, {"format", "binary"}};
    } else {
      schema = {{"type", "string"}};
    }
    if (r.method == Method::kGet) required = false;
    op["requestBody"] = {{"required", required}, {"content", {{r.request_type, {{"schema", schema}}}}}};
  }
  if (!r.s3_operations.empty()) {
    json ops = json::array();
    for (const s3::Operation& o : r.s3_operations) {
      const std::string selector = o.selector.Describe();
      ops.push_back({{"operation", o.name}, {"selector", selector.empty() ? "default" : selector},
                     {"access", auth::AccessNames(o.bits)}});
    }
    op["x-s3-operations"] = ops;
  }

  // Replies.
  json ok = {{"description", "success"}};
  if (!r.response_type.empty()) {
    json schema = !r.response_schema.empty() ? Ref(r.response_schema)
                  : r.response_type == "application/octet-stream" ? json{{"type", "string"}, {"format", "binary"}}
                                                                   : json{{"type", "string"}};
    ok["content"] = {{r.response_type, {{"schema", schema}}}};
  }
  if (!r.response_headers.empty()) {
    json hs = json::object();
    for (const Param& h : r.response_headers) hs[std::string(h.name)] = {{"description", h.description}, {"schema", {{"type", h.type}}}};
    ok["headers"] = hs;
  }
  json responses = {{std::to_string(r.ok_status), ok}};
  if (r.by_action && r.area == "buckets") responses["202"] = {{"description", "accepted: a job started (its ID in the body or Ais-Xaction-Id)"}};
  if (r.method == Method::kGet && r.area == "objects") {
    responses["206"] = {{"description", "a range (Range header)"},
                        {"content", {{"application/octet-stream", {{"schema", {{"type", "string"}, {"format", "binary"}}}}}}}};
  }
  if (s3) {
    responses["default"] = {{"description", "an S3 error"},
                            {"content", {{"application/xml", {{"schema", Ref("S3Error")}}}}}};
  } else if (r.area.empty()) {
    responses["default"] = {{"description", "an error (AIS error JSON)"},
                            {"content", {{"application/json", {{"schema", Ref("AisError")}}}}}};
  } else if (r.method == Method::kHead) {
    responses["default"] = {{"description", "an error: the AIS error JSON in the Hdr-Error header"},
                            {"headers", {{"Hdr-Error", {{"schema", {{"type", "string"}}}, {"description", "AisError JSON"}}}}}};
  } else {
    responses["default"] = {{"description", "an error: 400 bad request, 401/403 access, 404 not found, 405, 409, "
                                             "416, 429 busy, 500, 501 not supported"},
                            {"content", {{"application/json", {{"schema", Ref("AisError")}}}}}};
  }
  op["responses"] = responses;
  return op;
}

bool PlainKey(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  }
  // Words YAML would read as something other than a string key.
  return k != "true" && k != "false" && k != "null" && k != "yes" && k != "no" && k != "on" && k != "off" &&
         !std::isdigit(static_cast<unsigned char>(k[0])) && k[0] != '-' && k[0] != '.';
}

std::string Key(const std::string& k) { return PlainKey(k) ? k : json(k).dump(); }

bool Inline(const json& v) { return !v.is_structured() || v.empty(); }

std::string Scalar(const json& v) {
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Emit(const json& v, int indent, std::string* out);

// One "key: value" of a map (or the rest of a "- " line), at `indent`.
void EmitEntry(const std::string& head, const json& v, int indent, std::string* out) {
  out->append(head);
  if (Inline(v)) {
    out->append(" ").append(Scalar(v)).append("\n");
    return;
  }
  out->append("\n");
  Emit(v, indent + 2, out);
}

void Emit(const json& v, int indent, std::string* out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) EmitEntry(pad + Key(k) + ":", child, indent, out);
    return;
  }
  for (const json& item : v) {  // an array: "- " then the item, its map keys aligned after the dash
    if (Inline(item)) {
      out->append(pad).append("- ").append(Scalar(item)).append("\n");
    } else if (item.is_object()) {
      bool first = true;
      for (const auto& [k, child] : item.items()) {
        EmitEntry(pad + (first ? "- " : "  ") + Key(k) + ":", child, indent + 2, out);
        first = false;
      }
    } else {
      out->append(pad).append("-\n");
      Emit(item, indent + 2, out);
    }
  }
}

}  // namespace

json OpenApiDocument() {
  json doc;
  doc["openapi"] = "3.0.3";
  doc["info"] = {{"title", "aistore REST API"},
                 {"version", "v1"},
                 {"description",
                  "Every endpoint of aistore-server: the AIS REST API v1 (/v1), the S3 front end (/s3; also at the "
                  "root path with feature S3-API-via-Root) and /metrics. Printed from the server's route table "
                  "(server/src/router/routes.cc): do not edit; `aistore-server --print-openapi` writes it. "
                  "`x-ais-access` names the permission bits a token needs (docs/access-control.md); `x-ais-actions` "
                  "the action messages an endpoint takes, each with its bits."}};
  doc["servers"] = {{{"url", "http://localhost:8080"}}};
  json paths = json::object();
  json tags = json::object();
  for (const RouteSpec& r : RouteTable()) {
    std::string method(MethodName(r.method));
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[std::string(r.path)][method] = Operation(r);
  }
  doc["paths"] = paths;
  doc["components"] = {
      {"schemas", Schemas()},
      {"securitySchemes",
       {{"bearerAuth", {{"type", "http"}, {"scheme", "bearer"}, {"bearerFormat", "JWT"},
                        {"description", "an AuthN or OIDC token; needed only when the server requires tokens"}}}}}};
  return doc;
}

std::string ToYaml(const json& doc) {
  std::string out;
  if (Inline(doc)) return Scalar(doc) + "\n";
  Emit(doc, 0, &out);
  return out;
}

const std::string& OpenApiYaml() {
  static const std::string text = "# Generated by `aistore-server --print-openapi` from server/src/router/routes.cc: do not edit.\n" +
                                  ToYaml(OpenApiDocument());
  return text;
}

}  // namespace ais::router
