// The route table's own rules, checked row by row: each /v1 row is found by a request of its
// shape and names whom to call; access is stated; the OpenAPI document has every row. And the
// one thing the table cannot state itself: every query parameter a handler reads has its row.
#include "router/routes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "router/openapi.h"
#include "util/strings.h"

namespace ais::router {
namespace {

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every first capture of `re` in the .cc files under `dir` (tests excluded).
std::set<std::string> Scan(const std::string& dir, const std::regex& re) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(AIS_SOURCE_DIR) + "/" + dir)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".cc") || name.ends_with("_test.cc")) continue;
    const std::string text = ReadAll(e.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      out.insert((*it)[1].str());
    }
  }
  return out;
}

bool HasQuery(std::string_view name) {
  for (const auto& r : RouteTable()) {
    for (const auto& q : r.query) {
      if (IEquals(q.name, name)) return true;
    }
  }
  return false;
}

TEST(RouteTable, EveryQueryParameterAHandlerReadsHasARow) {
  std::set<std::string> names = Scan("handlers", std::regex(R"(query\(\"([^\"]+)\"\))"));
  for (const auto& n : Scan("handlers", std::regex(R"(QueryTrue\(ex, \"([^\"]+)\"\))"))) names.insert(n);
  for (const auto& n : Scan("s3", std::regex(R"(query\(\"([^\"]+)\"\))"))) names.insert(n);
  for (const auto& n : Scan("s3", std::regex(R"(has\(\"([^\"]+)\"\))"))) names.insert(n);
  // set-config's keys are read from a list: {"auth.client_auth_required", "auth.enabled"}.
  for (const auto& n : Scan("handlers", std::regex(R"(\"(auth\.[a-z_]+|log\.[a-z_]+)\")"))) names.insert(n);
  ASSERT_GT(names.size(), 30u);
  for (const auto& n : names) EXPECT_TRUE(HasQuery(n)) << "query parameter \"" << n << "\" has no row";
}

// A request in the shape of a row's path template: each {param} a sample value.
Route RouteOf(std::string_view path) {
  Route r;
  std::vector<std::string> segs;
  for (auto seg : Split(path.substr(4), '/')) segs.emplace_back(seg);  // after "/v1/"
  auto sample = [](const std::string& s) { return s.starts_with('{') ? std::string("x") : s; };
  r.area = segs[0];
  if (segs.size() > 1) r.bucket = sample(segs[1]);
  if (segs.size() > 2) r.object = sample(segs[2]);
  return r;
}

// Dispatch is the table: every /v1 row is found by a request of its own shape, and has whom to
// call — its handler, each action's or each `what` value's — and no action or value twice.
TEST(RouteTable, EveryRowIsFoundByItsPathAndHasItsHandlers) {
  size_t rows = 0;
  for (const RouteSpec& r : RouteTable()) {
    if (!r.path.starts_with("/v1/")) continue;
    ++rows;
    const std::string where = std::string(MethodName(r.method)) + " " + std::string(r.path);
    EXPECT_EQ(FindRoute(r.method, RouteOf(r.path)), &r) << where;
    if (!r.what.empty()) {
      std::set<std::string_view> names;
      for (const WhatValue& w : r.what) {
        EXPECT_NE(w.handler, nullptr) << where << " what=" << w.name;
        EXPECT_TRUE(names.insert(w.name).second) << where << " what=" << w.name << " twice";
      }
      EXPECT_FALSE(r.unknown_what.empty()) << where;
      EXPECT_TRUE(r.actions.empty() && !r.serve.local && !r.serve.remote) << where << ": one way to dispatch";
    } else if (!r.actions.empty()) {
      std::set<std::string_view> names;
      for (const Action& a : r.actions) {
        EXPECT_TRUE(a.serve.local || a.serve.remote) << where << " action " << a.name;
        EXPECT_TRUE(names.insert(a.name).second) << where << " action " << a.name << " twice";
      }
      EXPECT_TRUE(!r.serve.local && !r.serve.remote) << where << ": one way to dispatch";
    } else {
      EXPECT_TRUE(r.serve.local || r.serve.remote) << where << " has no handler";
    }
    // A row that serves only one kind of bucket must name a bucket to tell which.
    if (!r.on_bucket && r.actions.empty() && r.what.empty()) {
      EXPECT_NE(r.serve.local, nullptr) << where;
    }
  }
  EXPECT_GT(rows, 30u);
}

TEST(RouteTable, RowsAreUniqueAndAccessIsStated) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : RouteTable()) {
    EXPECT_TRUE(seen.insert({std::string(MethodName(r.method)), std::string(r.path)}).second)
        << MethodName(r.method) << " " << r.path << " twice";
    // A closed row needs bits, or bits from its action (or, for GetBatch, from each bucket).
    if (!r.open) {
      EXPECT_TRUE(r.bits != 0 || r.by_action) << r.path;
    }
    for (const auto& a : r.actions) EXPECT_NE(a.bits, 0u) << r.path << " " << a.name;
  }
}

Route R(std::string area, std::string bucket = "", std::string object = "") {
  return Route{.area = std::move(area), .bucket = std::move(bucket), .object = std::move(object)};
}

TEST(RouteTable, FindRouteMatchesLiteralsAndParameters) {
  const RouteSpec* get = FindRoute(Method::kGet, R("objects", "b", "a/b/c"));
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->path, "/v1/objects/{bucket}/{object}");
  EXPECT_EQ(get->bits, auth::kGet);
  EXPECT_EQ(FindRoute(Method::kGet, R("objects", "b")), nullptr);  // GET needs an object
  ASSERT_NE(FindRoute(Method::kPost, R("objects", "b")), nullptr);
  EXPECT_EQ(FindRoute(Method::kPost, R("objects", "b"))->path, "/v1/objects/{bucket}");
  ASSERT_NE(FindRoute(Method::kPut, R("cluster", "setconfig")), nullptr);
  EXPECT_EQ(FindRoute(Method::kPut, R("cluster", "other")), nullptr);  // a literal segment must match
  EXPECT_EQ(FindRoute(Method::kPut, R("cluster"))->path, "/v1/cluster");
  EXPECT_EQ(FindRoute(Method::kGet, R("ml", "moss", "b"))->path, "/v1/ml/moss/{bucket}");
  EXPECT_EQ(FindRoute(Method::kGet, R("nosuch")), nullptr);
  EXPECT_EQ(FindRoute(Method::kGet, R("s3", "b")), nullptr);  // S3 rows are not /v1 routes
  const RouteSpec* del = FindRoute(Method::kDelete, R("buckets", "b"));
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(ActionBits(*del, ""), auth::kDestroyBucket);
  EXPECT_EQ(ActionBits(*del, "evict-listrange"), auth::kObjDelete);
  EXPECT_EQ(ActionBits(*del, "no-such-action"), auth::kAdmin);
}

TEST(OpenApi, DocumentHasEveryRowAndYamlIsStable) {
  const nlohmann::json doc = OpenApiDocument();
  EXPECT_EQ(doc["openapi"], "3.0.3");
  size_t ops = 0;
  std::set<std::string> ids;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      ++ops;
      EXPECT_TRUE(ids.insert(op["operationId"].get<std::string>()).second) << path << " " << method;
    }
  }
  EXPECT_EQ(ops, RouteTable().size());
  EXPECT_EQ(OpenApiYaml(), OpenApiYaml());
  EXPECT_EQ(ToYaml(nlohmann::json::parse(R"({"a":{"b":[1,{"c":"x: y","d":[]}],"e":{}},"on":"-"})")),
            "a:\n  b:\n    - 1\n    - c: \"x: y\"\n      d: []\n  e: {}\n\"on\": \"-\"\n");
}

}  // namespace
}  // namespace ais::router
