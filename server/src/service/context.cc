#include "service/context.h"

#include "store/names.h"

namespace ais {

Task<Result<nlohmann::json>> ReadJsonBody(Exchange& ex) {
  auto body = co_await ex.ReadBody(DefaultJsonLimits().max_body);
  if (!body.ok()) co_return body.status();
  co_return ParseJson(*body);
}

Result<BucketNs> NamespaceOf(const Exchange& ex) { return ParseNamespace(ex.query("namespace").value_or("")); }

}  // namespace ais
