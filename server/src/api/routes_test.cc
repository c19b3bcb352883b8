// The route table against the handlers' sources: what a handler reads or compares (an action, a
// query parameter, a `what=` value, an area the router dispatches) must have its row, so the
// access bits and the OpenAPI document cannot fall behind the code. And the table's own rules.
#include "api/routes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "api/openapi.h"
#include "util/strings.h"

namespace ais::api {
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

bool HasAction(std::string_view action) {
  for (const auto& r : RouteTable()) {
    for (const auto& a : r.actions) {
      if (a.name == action) return true;
    }
  }
  return false;
}

bool HasQuery(std::string_view name) {
  for (const auto& r : RouteTable()) {
    for (const auto& q : r.query) {
      if (IEquals(q.name, name)) return true;
    }
  }
  return false;
}

TEST(RouteTable, EveryActionAHandlerComparesHasARow) {
  const auto actions = Scan("handlers", std::regex(R"(action [!=]= \"([a-z-]+)\")"));
  ASSERT_GT(actions.size(), 20u) << "the scan found too little: has the handlers' spelling changed?";
  for (const auto& a : actions) EXPECT_TRUE(HasAction(a)) << "action \"" << a << "\" has no row in api/routes.cc";
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

TEST(RouteTable, EveryWhatValueIsDocumented) {
  const auto whats = Scan("handlers", std::regex(R"(what == \"([a-z_]+)\")"));
  ASSERT_GT(whats.size(), 15u);
  std::set<std::string> documented;  // the words of the `what` parameters' descriptions
  const std::regex word("[a-z_]+");
  for (const auto& r : RouteTable()) {
    for (const auto& q : r.query) {
      if (q.name != "what") continue;
      const std::string d(q.description);
      for (auto it = std::sregex_iterator(d.begin(), d.end(), word); it != std::sregex_iterator(); ++it) {
        documented.insert(it->str());
      }
    }
  }
  for (const auto& w : whats) EXPECT_TRUE(documented.count(w)) << "what=" << w << " is not documented";
}

TEST(RouteTable, EveryAreaTheRouterDispatchesHasARow) {
  const auto areas = Scan("handlers", std::regex(R"(route\.area == \"([a-z]+)\")"));
  ASSERT_GT(areas.size(), 8u);
  for (const auto& area : areas) {
    const bool found = std::any_of(RouteTable().begin(), RouteTable().end(),
                                   [&](const RouteSpec& r) { return r.area == area; });
    EXPECT_TRUE(found) << "area \"" << area << "\" has no row";
  }
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
}  // namespace ais::api
