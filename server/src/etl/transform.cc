#include "etl/transform.h"

#include <nlohmann/json.hpp>

#include "util/strings.h"

namespace ais::etl {

namespace {

std::string EtlArgsQuery(const std::string& etl_args) {
  return etl_args.empty() ? "" : "?etl_args=" + QueryEscape(etl_args);
}

// ws://: the whole object in one message (as AIS sends it), the reply in one.
Result<int> TransformWs(RunningEtl& etl, const TransformSource& src, const std::string& etl_args,
                        const std::vector<std::string>& pipeline, const OnReplyStart& on_start,
                        const OnReplyData& on_data) {
  std::string data(src.size, '\0');
  for (size_t done = 0; done < data.size();) {
    auto n = src.read(data.data() + done, data.size() - done);
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::IOError("object shorter than its size");
    done += *n;
  }
  nlohmann::json control = {{"path", src.object}};
  if (!etl_args.empty()) control["etl_args"] = etl_args;
  if (!pipeline.empty()) control["pipeline"] = NodeUrlHeader(pipeline);
  auto reply = etl.ws->Transform(control.dump(), data, etl.spec.obj_timeout);
  if (!reply.ok()) return reply.status();
  if (reply->delivered) return 204;
  AIS_RETURN_IF_ERROR(on_start(200, reply->body.size()));
  if (!reply->body.empty()) AIS_RETURN_IF_ERROR(on_data(reply->body.data(), reply->body.size()));
  return 200;
}

}  // namespace

std::string Uname(const std::string& provider, const std::string& ns, const std::string& bucket,
                  const std::string& object) {
  return provider + "/" + ns + "/" + bucket + "/" + object;
}

std::string PathEscape(std::string_view s) { return PercentEncode(s, "-._~$&+:=@"); }

std::string QueryEscape(std::string_view s) { return PercentEncode(s, "-._~"); }

std::string HpushTarget(const std::string& bucket, const std::string& object, const std::string& etl_args) {
  return "/" + PercentEncode(bucket + "/" + object, "-._~$&+:=@/") + EtlArgsQuery(etl_args);
}

std::string NodeUrlHeader(const std::vector<std::string>& pipeline) {
  std::string hops;
  for (const auto& url : pipeline) hops += (hops.empty() ? "" : ",") + url;
  return hops;
}

Result<int> Transform(RunningEtl& etl, const TransformSource& src, const std::string& etl_args,
                      const std::vector<std::string>& pipeline, const OnReplyStart& on_start,
                      const OnReplyData& on_data) {
  if (etl.ws) return TransformWs(etl, src, etl_args, pipeline, on_start, on_data);
  TransformCall call;
  call.timeout = etl.spec.obj_timeout;
  if (etl.spec.comm == CommType::kHpull) {
    call.method = "GET";
    call.path_and_query = "/" + PathEscape(Uname(src.provider, src.ns, src.bucket, src.object)) + EtlArgsQuery(etl_args);
  } else {
    call.method = "PUT";
    call.path_and_query = HpushTarget(src.bucket, src.object, etl_args);
    call.body_size = src.size;
    call.read_body = src.read;
  }
  if (!pipeline.empty()) call.headers.emplace_back("Ais-Node-Url", NodeUrlHeader(pipeline));
  return etl.client.Call(call, on_start, on_data);
}

}  // namespace ais::etl
