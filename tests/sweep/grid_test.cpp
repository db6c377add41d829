// Grid parsing and the cartesian product's order (first --grid slowest), which fixes point numbers.
#include <gtest/gtest.h>

#include "vocabulary/config_error.hpp"
#include "simulator/sweep/grid.hpp"

namespace stepsim::sweep {
namespace {

TEST(Grid, SplitsValuesOnTopLevelCommasOnly) {
  const auto a = parse_grid_axis("parallel.microbatches=1,2,4,8");
  EXPECT_EQ(a.key, "parallel.microbatches");
  EXPECT_EQ(a.values, (std::vector<std::string>{"1", "2", "4", "8"}));
  // YAML flow values keep their inner commas; quoted commas too.
  const auto b = parse_grid_axis("scenario.stragglers=[{gpu: 5, clock: 0.8}],[],\"a,b\"");
  EXPECT_EQ(b.values, (std::vector<std::string>{"[{gpu: 5, clock: 0.8}]", "[]", "\"a,b\""}));
}

TEST(Grid, RejectsMalformedAxes) {
  EXPECT_THROW(parse_grid_axis("parallel.microbatches"), ConfigError);
  EXPECT_THROW(parse_grid_axis("=1,2"), ConfigError);
  EXPECT_THROW(parse_grid_axis("parallel.microbatches=1,,2"), ConfigError);
  EXPECT_THROW(parse_grid_axis("parallel.microbatches="), ConfigError);
}

TEST(Grid, ChecksKeysAndValuesAgainstTheSchema) {
  EXPECT_NO_THROW(check_grid({parse_grid_axis("parallel.microbatches=1,2"), parse_grid_axis("schedule=1f1b,fsdp")}));
  try {
    check_grid({parse_grid_axis("parallel.microbatchez=1,2")});
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--grid", 0), 0u) << msg;  // names the option the user typed
    EXPECT_NE(msg.find("parallel.microbatchez"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
  }
  EXPECT_THROW(check_grid({parse_grid_axis("parallel.microbatches=2,-1")}), ConfigError);  // not positive
  EXPECT_THROW(check_grid({parse_grid_axis("schedule=1f1b,zigzag")}), ConfigError);        // not a choice
  EXPECT_THROW(check_grid({parse_grid_axis("parallel.pp=1"), parse_grid_axis("parallel.pp=2")}), ConfigError);
  EXPECT_THROW(check_grid({}), ConfigError);
}

TEST(Grid, CartesianProductVariesTheLastAxisFastest) {
  const auto pts = cartesian_product({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  ASSERT_EQ(pts.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> expect = {{"1", "x"}, {"1", "y"}, {"1", "z"},
                                                                   {"2", "x"}, {"2", "y"}, {"2", "z"}};
  for (size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].index, int(i));
    ASSERT_EQ(pts[i].values.size(), 2u);
    EXPECT_EQ(pts[i].values[0], (std::pair<std::string, std::string>{"a", expect[i].first}));
    EXPECT_EQ(pts[i].values[1], (std::pair<std::string, std::string>{"b", expect[i].second}));
  }
  EXPECT_EQ(pts[4].overrides(), (std::vector<std::string>{"a=2", "b=y"}));
}

TEST(Grid, PointNamesSortInPointOrder) {
  EXPECT_EQ(point_name(7, 8), "007");
  EXPECT_EQ(point_name(999, 1000), "999");
  EXPECT_EQ(point_name(7, 1001), "0007");
  EXPECT_EQ(point_name(12345, 20000), "12345");
}

}  // namespace
}  // namespace stepsim::sweep
