// /v1/tokens, the calls an AuthN service makes to a cluster it manages (docs/authn.md):
//   POST   with a bearer token: does this cluster accept the token? (200, or 401)
//          with AuthN's ServerConf body and no token: does this cluster verify tokens signed
//          with that key? (the registration check: 200, or 401)
//   DELETE {"tokens": [...], "version": "..."}: revoke the tokens. AuthN pushes revocations
//          without a token of its own, so a caller without an admin token may revoke only tokens
//          that verify here: revoking one needs the token itself, which already is all its
//          holder's rights, and strings that were never tokens cannot grow the revoked set.
#include <nlohmann/json.hpp>

#include "auth/authorizer.h"
#include "handlers/handlers.h"
#include "service/access.h"
#include "service/context.h"
#include "util/clock.h"
#include "util/json_fields.h"
#include "util/log_ring.h"

namespace ais {

namespace {

int64_t NowSeconds() { return NowNs() / 1000000000; }

// Tokens in one revocation (AuthN sends at most 256): each may cost a signature check.
constexpr size_t kMaxRevokedPerRequest = 1024;

bool HasToken(const Exchange& ex) {
  return !ex.header("Authorization").empty() || !ex.header("X-Amz-Security-Token").empty();
}

// AuthN's registration check: the key in its ServerConf against ours.
Status CheckServerConf(ServerContext& ctx, const nlohmann::json& body) {
  std::string secret_hash, public_key;
  JsonFields f(body, "");
  f.Str("secret", &secret_hash).Str("public_key", &public_key).Unused(JsonFields::Kind::kAny, {"expiration_time", "rsa_key_bits"});
  AIS_RETURN_IF_ERROR(f.Finish());
  if (!ctx.auth->AcceptsKeyOf(secret_hash, public_key)) {
    return Status::Unauthorized("invalid token [err: AuthN's signing key is not the one this cluster verifies with]");
  }
  return Status::OK();
}

}  // namespace

Task<Handled> ValidateToken(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  if (!ctx.auth) co_return Status::NotSupported("access control is not configured on this server");
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  if (HasToken(ex)) {
    auto claims = Authenticate(ctx, ex);
    if (!claims.ok()) co_return claims.status();
  } else if (Status st = CheckServerConf(ctx, *body); !st.ok()) {
    co_return st;
  }
  co_return co_await ex.Reply(http::status::ok);
}

Task<Handled> RevokeTokens(ServerContext& ctx, Exchange& ex, const ApiCall&) {
  if (!ctx.auth) co_return Status::NotSupported("access control is not configured on this server");
  auto body = co_await ReadJsonBody(ex);
  if (!body.ok()) co_return body.status();
  std::vector<std::string> tokens;
  std::string version;
  JsonFields f(*body, "");
  f.StrList("tokens", &tokens).Str("version", &version);
  if (Status st = f.Finish(); !st.ok()) co_return st;
  if (tokens.size() > kMaxRevokedPerRequest) {
    co_return Status::InvalidArgument("too many tokens to revoke in one request (" + std::to_string(tokens.size()) +
                                      ", at most " + std::to_string(kMaxRevokedPerRequest) + ")");
  }
  bool admin = false;
  if (HasToken(ex)) {
    auto claims = Authenticate(ctx, ex);
    if (claims.ok()) admin = auth::CheckPermissions(**claims, ctx.cluster_uuid, nullptr, auth::kAdmin).ok();
    else if (ctx.auth->required()) co_return claims.status();
  }
  std::vector<std::string> revoke;
  for (auto& t : tokens) {
    if (admin || ctx.auth->Verify(t, NowSeconds()).ok()) revoke.push_back(std::move(t));
  }
  ctx.auth->Revoke(revoke);
  LogInfo("revoked " + std::to_string(revoke.size()) + " token(s) of " + std::to_string(tokens.size()) + " listed");
  co_return co_await ex.Reply(http::status::ok);
}

}  // namespace ais
