#include "service/context.h"

#include <algorithm>
#include <cctype>

namespace ais {

Task<Result<nlohmann::json>> ReadJsonBody(Exchange& ex) {
  auto body = co_await ex.ReadBody(DefaultJsonLimits().max_body);
  if (!body.ok()) co_return body.status();
  co_return ParseJson(*body);
}

Status CheckNamespace(const Exchange& ex) {
  auto ns = ex.query("namespace");
  if (!ns || ns->empty() || *ns == "@#") return Status::OK();
  // AIS syntax: "#name" (a namespace of this cluster) or "@uuid#name" (of a remote cluster).
  auto sep = ns->find('#');
  auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  bool valid = (ns->front() == '@' || ns->front() == '#') && sep != std::string::npos &&
               std::all_of(ns->begin() + 1, ns->end(), [&](char c) { return c == '#' || ok_char(c); }) &&
               ns->find('#', sep + 1) == std::string::npos;
  if (!valid) {
    return Status::InvalidArgument("invalid namespace \"" + ns->substr(0, 64) + "\" (expecting @uuid#name or #name)");
  }
  return Status::NotSupported("bucket namespaces are not supported by this server");
}

}  // namespace ais
