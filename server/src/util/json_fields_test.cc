#include "util/json_fields.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

using json = nlohmann::json;

struct Msg {
  std::string name;
  bool flag = false;
  std::optional<bool> opt;
  int64_t n = 7;
  uint64_t u = 0;
  uint64_t size = 0;
  std::vector<std::string> list;
  std::string inner;
};

Status Read(const json& j, Msg* m) {
  JsonFields f(j, "value");
  f.Str("name", &m->name).Bool("flag", &m->flag).OptBool("opt", &m->opt).Int("n", &m->n, -5, 100);
  f.Uint("u", &m->u, 1000).Size("size", &m->size).StrList("list", &m->list);
  f.Object("obj", [m](JsonFields& o) { o.Str("inner", &m->inner); });
  return f.Finish();
}

TEST(JsonFields, ReadsTypedFields) {
  Msg m;
  Status st = Read(json::parse(R"({"name":"x","flag":true,"opt":false,"n":-5,"u":1000,"size":"8KiB",
                                  "list":["a","b"],"obj":{"inner":"i"}})"),
                   &m);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(m.name, "x");
  EXPECT_TRUE(m.flag);
  EXPECT_EQ(m.opt, false);
  EXPECT_EQ(m.n, -5);
  EXPECT_EQ(m.u, 1000u);
  EXPECT_EQ(m.size, 8192u);
  EXPECT_EQ(m.list, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.inner, "i");
}

TEST(JsonFields, NullOrAbsentMeansNotGiven) {
  Msg m;
  Status st = Read(json::parse(R"({"name":null,"flag":null,"opt":null,"n":null,"list":null,"obj":null})"), &m);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(m.name, "");
  EXPECT_FALSE(m.opt.has_value());
  EXPECT_EQ(m.n, 7);
  EXPECT_TRUE(Read(json(nullptr), &m).ok());  // a null value is an empty message
}

TEST(JsonFields, KeysMatchCaseInsensitivelyExactFirst) {
  Msg m;
  ASSERT_TRUE(Read(json::parse(R"({"NAME":"upper","Flag":true})"), &m).ok());
  EXPECT_EQ(m.name, "upper");
  EXPECT_TRUE(m.flag);
  // Both spellings: the exact one is read, the other is an unknown field.
  Status st = Read(json::parse(R"({"NAME":"upper","name":"exact"})"), &m);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(m.name, "exact");
}

// Every misfit is an error that names the field by its path.
TEST(JsonFields, MisfitsNameTheField) {
  struct Case {
    const char* body;
    const char* needle;
  };
  const Case cases[] = {
      {R"({"name":5})", "\"value.name\": expecting a string, got integer"},
      {R"({"flag":"true"})", "\"value.flag\": expecting a boolean, got string"},
      {R"({"opt":0})", "\"value.opt\": expecting a boolean"},
      {R"({"n":1.5})", "\"value.n\": expecting an integer, got number with a fraction"},
      {R"({"n":101})", "\"value.n\": 101 is out of range [-5, 100]"},
      {R"({"n":-6})", "out of range"},
      {R"({"n":18446744073709551615})", "out of range"},
      {R"({"u":-1})", "\"value.u\": -1 is negative"},
      {R"({"u":1001})", "over the limit of 1000"},
      {R"({"size":"8 parsecs"})", "\"value.size\": invalid size"},
      {R"({"size":-3})", "is negative"},
      {R"({"size":true})", "expecting a size"},
      {R"({"list":"a"})", "\"value.list\": expecting an array of strings, got string"},
      {R"({"list":["a",3]})", "\"value.list[1]\": expecting a string, got integer"},
      {R"({"obj":[]})", "\"value.obj\": expecting an object, got array"},
      {R"({"obj":{"inner":false}})", "\"value.obj.inner\": expecting a string, got boolean"},
      {R"({"obj":{"extra":1}})", "unknown field \"value.obj.extra\""},
      {R"({"surprise":1})", "unknown field \"value.surprise\""},
  };
  for (const auto& c : cases) {
    Msg m;
    Status st = Read(json::parse(c.body), &m);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.body;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << c.body << " -> " << st.message();
  }
  Msg m;
  Status st = Read(json::array(), &m);
  EXPECT_NE(st.message().find("\"value\" must be a JSON object, not array"), std::string::npos) << st.message();
}

TEST(JsonFields, StringLimit) {
  JsonLimits limits;
  limits.max_string = 4;
  std::string s;
  const json fits = {{"s", "abcd"}}, too_long = {{"s", "abcde"}};
  JsonFields ok(fits, "", limits);
  EXPECT_TRUE(ok.Str("s", &s).Finish().ok());
  JsonFields over(too_long, "", limits);
  Status st = over.Str("s", &s).Finish();
  EXPECT_NE(st.message().find("\"s\": string of 5 bytes is over the limit of 4"), std::string::npos) << st.message();
}

TEST(ParseJson, RefusesMalformedAndTooDeep) {
  JsonLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(ParseJson("", limits).ok());
  EXPECT_TRUE(ParseJson("  \n", limits)->is_object());
  EXPECT_TRUE(ParseJson(R"({"a":{"b":[1]}})", limits).ok());
  auto deep = ParseJson(R"({"a":{"b":[[1]]}})", limits);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nested deeper than 3"), std::string::npos);
  EXPECT_FALSE(ParseJson("{", limits).ok());
  EXPECT_FALSE(ParseJson("\"\xff\"", limits).ok());  // invalid UTF-8
  // Far past the limit: refused without building (or recursing through) the nest.
  std::string nest(1 << 20, '[');
  EXPECT_FALSE(ParseJson(nest, limits).ok());
}

}  // namespace
}  // namespace ais
