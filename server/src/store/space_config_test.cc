// The space and lru config: AIS's defaults and rules, every misfit a 400 naming its field.
#include "store/space_config.h"

#include <gtest/gtest.h>

#include <string>

namespace ais {
namespace {

constexpr auto kFloor = SpaceConfig::kAisMinDontEvictTime;

Status Set(SpaceConfig* c, std::string_view key, std::string_view value) {
  bool known = false;
  Status st = c->SetKey(key, value, &known);
  EXPECT_TRUE(known) << key;
  return st;
}

TEST(SpaceConfigTest, DefaultsAreAisAndValid) {
  SpaceConfig c;
  EXPECT_TRUE(c.Validate(kFloor).ok());
  EXPECT_EQ(c.SpaceJson(), nlohmann::json::parse(R"({"cleanupwm":65,"lowwm":75,"highwm":90,"out_of_space":95})"));
  EXPECT_EQ(c.LruJson(), nlohmann::json::parse(R"({"dont_evict_time":"2h0m","capacity_upd_time":"10m","enabled":true})"));
}

TEST(SpaceConfigTest, WatermarksMustBeOrdered) {
  struct Case {
    const char* key;
    const char* value;
    const char* field;  // the one the error names
  } cases[] = {{"space.highwm", "70", "space.highwm"},       // below lowwm 75
               {"space.lowwm", "60", "space.lowwm"},         // below cleanupwm 65
               {"space.out_of_space", "85", "space.out_of_space"},
               {"space.cleanupwm", "0", "space.cleanupwm"}};
  for (const auto& k : cases) {
    SpaceConfig c;
    ASSERT_TRUE(Set(&c, k.key, k.value).ok()) << k.key;
    Status st = c.Validate(kFloor);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << k.key;
    EXPECT_NE(st.message().find(std::string("invalid ") + k.field), std::string::npos) << st.message();
  }
  SpaceConfig c;
  ASSERT_TRUE(Set(&c, "space.cleanupwm", "10").ok());
  ASSERT_TRUE(Set(&c, "space.lowwm", "20").ok());
  ASSERT_TRUE(Set(&c, "space.highwm", "30").ok());
  ASSERT_TRUE(Set(&c, "space.out_of_space", "40").ok());
  EXPECT_TRUE(c.Validate(kFloor).ok());
}

TEST(SpaceConfigTest, MisfitsNameTheField) {
  SpaceConfig c;
  Status st = Set(&c, "space.highwm", "101");
  EXPECT_NE(st.message().find("space.highwm"), std::string::npos) << st.message();
  st = Set(&c, "space.lowwm", "lots");
  EXPECT_NE(st.message().find("space.lowwm"), std::string::npos) << st.message();
  st = Set(&c, "lru.dont_evict_time", "soon");
  EXPECT_NE(st.message().find("lru.dont_evict_time"), std::string::npos) << st.message();
  EXPECT_FALSE(Set(&c, "lru.enabled", "maybe").ok());
  bool known = true;
  EXPECT_TRUE(c.SetKey("features", "x", &known).ok());
  EXPECT_FALSE(known);
  nlohmann::json body = nlohmann::json::parse(R"({"highwm": 80, "lowest": 1})");
  JsonFields f(body, "value.space");
  c.ReadSpace(f);
  st = f.Finish();
  EXPECT_NE(st.message().find("value.space.lowest"), std::string::npos) << st.message();
}

TEST(SpaceConfigTest, DurationsHaveFloors) {
  SpaceConfig c;
  ASSERT_TRUE(Set(&c, "lru.dont_evict_time", "30m").ok());
  Status st = c.Validate(kFloor);
  EXPECT_NE(st.message().find("lru.dont_evict_time"), std::string::npos) << st.message();
  EXPECT_TRUE(c.Validate(std::chrono::seconds(1)).ok());  // a server started with a lower floor
  ASSERT_TRUE(Set(&c, "lru.dont_evict_time", "0").ok());  // 0: AIS's default
  EXPECT_EQ(c.dont_evict_time, SpaceConfig::kDefaultDontEvictTime);
  ASSERT_TRUE(Set(&c, "lru.capacity_upd_time", "5s").ok());
  st = c.Validate(kFloor);
  EXPECT_NE(st.message().find("lru.capacity_upd_time"), std::string::npos) << st.message();
  ASSERT_TRUE(Set(&c, "lru.capacity_upd_time", "90s").ok());
  ASSERT_TRUE(Set(&c, "lru.enabled", "false").ok());
  EXPECT_TRUE(c.Validate(kFloor).ok());
  EXPECT_EQ(c.LruJson()["capacity_upd_time"], "1m30s");
  EXPECT_FALSE(c.lru_enabled);
}

}  // namespace
}  // namespace ais
