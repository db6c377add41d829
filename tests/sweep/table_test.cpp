// The sweep table: report fields flattened to dotted names, identical columns on every row
// (failed points and plans lacking a field leave empty cells), RFC 4180 quoting, no wall time.
#include <gtest/gtest.h>

#include <sstream>

#include "simulator/sweep/sweep_table.hpp"

namespace stepsim::sweep {
namespace {

using nlohmann::json;

// Lists of text (the --set values and notes a point ran with) are one cell: a sweep's CSV keeps them.
TEST(SweepTable, FlattensScalarsAndLeavesOutArraysAndWallTime) {
  const json report = {{"step_time_s", 2.5},
                       {"critical_rank", 3},
                       {"explanation", "text"},
                       {"ranks", json::array({{{"rank", 0}}})},
                       {"roofline", {{"step_time_s", 2.0}, {"plan", {{"schedule", "fsdp"}}}, {"fsdp_sweep", json::array()}}},
                       {"sim", {{"wall_s", 0.7}, {"ops", 10}}},
                       {"sets", json::array({"parallel.pp=4", "schedule=1f1b"})},
                       {"notes", json::array()},
                       {"config", "/abs/path.yaml"},
                       {"nothing", nullptr}};
  const auto f = flatten_report(report);
  const std::map<std::string, std::string> expect = {{"step_time_s", "2.5"},
                                                     {"critical_rank", "3"},
                                                     {"explanation", "text"},
                                                     {"roofline.step_time_s", "2.0"},
                                                     {"roofline.plan.schedule", "fsdp"},
                                                     {"sim.ops", "10"},
                                                     {"sets", "parallel.pp=4; schedule=1f1b"},
                                                     {"nothing", ""}};
  EXPECT_EQ(f, expect);
}

TEST(SweepTable, EveryRowHasTheSameColumns) {
  const std::vector<GridAxis> axes = {{"parallel.microbatches", {"1", "2", "4"}}};
  const auto pts = cartesian_product(axes);
  std::vector<PointOutcome> outcomes = {
      {pts[0], flatten_report({{"step_time_s", 1.0}, {"fsdp_per_microbatch_s", 0.5}}), ""},
      {pts[1], {}, "stepsim: error: --set parallel.microbatches: too many"},
      {pts[2], flatten_report({{"step_time_s", 3.0}, {"bubble_s", 0.25}}), ""}};
  const auto t = build_table(axes, outcomes);
  EXPECT_EQ(t.columns,
            (std::vector<std::string>{"parallel.microbatches", "error", "bubble_s", "fsdp_per_microbatch_s", "step_time_s"}));
  ASSERT_EQ(t.rows.size(), 3u);
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.columns.size());
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1", "", "", "0.5", "1.0"}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"2", "stepsim: error: --set parallel.microbatches: too many", "", "", ""}));
  EXPECT_EQ(t.rows[2], (std::vector<std::string>{"4", "", "0.25", "", "3.0"}));
  EXPECT_EQ(t.column("step_time_s"), 4);
  EXPECT_EQ(t.column("absent"), -1);
}

TEST(SweepTable, GridValueWinsOverAReportFieldOfTheSameName) {
  const std::vector<GridAxis> axes = {{"sim.mode", {"full"}}};
  const auto t = build_table(axes, {{cartesian_product(axes)[0], {{"sim.mode", "reduced-ish"}}, ""}});
  EXPECT_EQ(t.columns, (std::vector<std::string>{"sim.mode", "error"}));
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"full", ""}));
}

TEST(SweepTable, CsvQuotesCellsWithCommasQuotesAndNewlines) {
  SweepTable t;
  t.columns = {"k", "error"};
  t.rows = {{"[{gpu: 5, clock: 0.8}]", "say \"no\"\nthen stop"}, {"1", ""}};
  std::ostringstream out;
  write_csv(t, out);
  EXPECT_EQ(out.str(), "k,error\n\"[{gpu: 5, clock: 0.8}]\",\"say \"\"no\"\"\nthen stop\"\n1,\n");
}

}  // namespace
}  // namespace stepsim::sweep
