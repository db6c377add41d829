// The sweep chart's series: simulation solid and `roofline.FIELD` dashed, points sorted by x,
// shares in percent, one pair of lines per value of the other grid keys, failed points left out.
#include <gtest/gtest.h>

#include "vocabulary/config_error.hpp"
#include "simulator/sweep/sweep_plot.hpp"

namespace stepsim::sweep {
namespace {

SweepTable table(const std::vector<GridAxis>& axes, const std::vector<std::map<std::string, std::string>>& fields,
                 const std::vector<std::string>& errors) {
  const auto pts = cartesian_product(axes);
  std::vector<PointOutcome> out;
  for (size_t i = 0; i < pts.size(); ++i) out.push_back({pts[i], fields[i], errors[i]});
  return build_table(axes, out);
}

TEST(SweepPlot, SimulationSolidRooflineDashedInPercentSortedByX) {
  const std::vector<GridAxis> axes = {{"parallel.microbatches", {"8", "1", "4", "2"}}};
  const auto t = table(axes,
                       {{{"exposed_comm_share", "0.70"}, {"roofline.exposed_comm_share", "0.693"}},
                        {{"exposed_comm_share", "0.42"}, {"roofline.exposed_comm_share", "0.130"}},
                        {},
                        {{"exposed_comm_share", "0.49"}, {"roofline.exposed_comm_share", "0.311"}}},
                       {"", "", "stepsim: error: boom", ""});
  const auto c = sweep_chart(t, axes, "parallel.microbatches", {"exposed_comm_share"}, "fsdp");
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_FALSE(c.series[0].dashed);
  EXPECT_TRUE(c.series[1].dashed);
  // The failed point (4 microbatches) is left out; the rest sorted by x; ratios drawn in percent.
  EXPECT_EQ(c.series[0].x, (std::vector<double>{1, 2, 8}));
  ASSERT_EQ(c.series[0].y.size(), 3u);
  EXPECT_NEAR(c.series[0].y[0], 42.0, 1e-12);
  EXPECT_NEAR(c.series[1].y[2], 69.3, 1e-12);
  EXPECT_TRUE(c.log2_x);  // 1 to 8
  EXPECT_EQ(c.x_label, "parallel.microbatches");
  EXPECT_NE(c.y_label.find("%"), std::string::npos);
}

TEST(SweepPlot, OtherGridKeysGetTheirOwnLinesAndNoRooflineWhenAbsent) {
  const std::vector<GridAxis> axes = {{"schedule", {"1f1b", "dualpipev"}}, {"parallel.microbatches", {"20", "30"}}};
  const auto t = table(axes, {{{"step_time_s", "3"}}, {{"step_time_s", "2"}}, {{"step_time_s", "1.5"}}, {{"step_time_s", "1"}}},
                       {"", "", "", ""});
  const auto c = sweep_chart(t, axes, "parallel.microbatches", {"step_time_s"}, "t");
  ASSERT_EQ(c.series.size(), 2u);  // one solid line per schedule, no roofline column
  EXPECT_NE(c.series[0].label.find("schedule=1f1b"), std::string::npos);
  EXPECT_NE(c.series[1].label.find("schedule=dualpipev"), std::string::npos);
  EXPECT_EQ(c.series[1].y, (std::vector<double>{1.5, 1}));  // seconds, not scaled
  EXPECT_FALSE(c.log2_x);  // 20 to 30
}

TEST(SweepPlot, RejectsUnknownFieldsAndNonGridX) {
  const std::vector<GridAxis> axes = {{"schedule", {"1f1b", "fsdp"}}};
  const auto t = table(axes, {{{"step_time_s", "3"}}, {{"step_time_s", "2"}}}, {"", ""});
  EXPECT_THROW(sweep_chart(t, axes, "schedule", {"step_time_z"}, "t"), ConfigError);
  EXPECT_THROW(sweep_chart(t, axes, "step_time_s", {"step_time_s"}, "t"), ConfigError);
}

TEST(SweepPlot, TextGridKeyIsDrawnAsCategoriesInGridOrder) {
  const std::vector<GridAxis> axes = {{"schedule", {"dualpipev", "1f1b"}}};
  const auto t = table(axes, {{{"step_time_s", "3"}}, {{"step_time_s", "2"}}}, {"", ""});
  const auto c = sweep_chart(t, axes, "schedule", {"step_time_s"}, "t");
  EXPECT_EQ(c.x_categories, (std::vector<std::string>{"dualpipev", "1f1b"}));
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_EQ(c.series[0].x, (std::vector<double>{0, 1}));  // indices into the categories
  EXPECT_EQ(c.series[0].y, (std::vector<double>{3, 2}));
  EXPECT_FALSE(c.log2_x);
}

TEST(SweepPlot, SecondUnitGetsTheRightAxisAndEachPairOneColour) {
  const std::vector<GridAxis> axes = {{"parallel.microbatches", {"1", "2"}}};
  const auto t = table(axes,
                       {{{"step_time_s", "3"}, {"roofline.step_time_s", "2"}, {"exposed_comm_share", "0.5"},
                         {"roofline.exposed_comm_share", "0.25"}},
                        {{"step_time_s", "4"}, {"roofline.step_time_s", "3"}, {"exposed_comm_share", "0.1"},
                         {"roofline.exposed_comm_share", "0.05"}}},
                       {"", ""});
  const auto c = sweep_chart(t, axes, "parallel.microbatches", {"step_time_s", "exposed_comm_share"}, "t");
  ASSERT_EQ(c.series.size(), 4u);
  EXPECT_EQ(c.y_label, "step_time_s (s)");
  EXPECT_EQ(c.y2_label, "exposed_comm_share (%)");
  EXPECT_FALSE(c.series[0].right_axis);
  EXPECT_TRUE(c.series[2].right_axis);
  EXPECT_NEAR(c.series[2].y[0], 50.0, 1e-12);  // the share in percent even beside seconds
  EXPECT_EQ(c.series[0].colour, c.series[1].colour);  // simulation and roofline of one field
  EXPECT_EQ(c.series[2].colour, c.series[3].colour);
  EXPECT_NE(c.series[0].colour, c.series[2].colour);
  // A third unit has no axis.
  EXPECT_THROW(sweep_chart(t, axes, "parallel.microbatches", {"step_time_s", "exposed_comm_share", "memory.peak_bytes"}, "t"),
               ConfigError);
}

TEST(SweepPlot, DefaultTitleNamesThePlanNotTheFile) {
  const std::vector<GridAxis> axes = {{"parallel.microbatches", {"1", "2"}}};
  const std::map<std::string, std::string> plan = {{"step_time_s", "1"},
                                                   {"roofline.plan.model", "DeepSeek-V3"},
                                                   {"roofline.plan.gpus", "2048"},
                                                   {"roofline.plan.pp", "8"},
                                                   {"roofline.plan.ep", "64"},
                                                   {"roofline.plan.schedule", "dualpipev"}};
  const auto t = table(axes, {{}, plan}, {"boom", ""});
  EXPECT_EQ(default_title(t, axes, {"parallel.zero=1"}),
            "DeepSeek-V3, 2048 GPUs, PP 8, EP 64, dualpipev, by parallel.microbatches; parallel.zero=1");
}

// The title once named the first point's schedule over a chart of three schedules (it described
// the first successful point, whatever the grid varied): a field the grid varies is left out.
TEST(SweepPlot, DefaultTitleComesFromTheGridActuallySwept) {
  const std::vector<GridAxis> axes = {{"schedule", {"1f1b", "interleaved", "dualpipev"}}};
  std::vector<std::map<std::string, std::string>> points;
  for (const std::string s : {"1f1b", "interleaved", "dualpipev"})
    points.push_back({{"step_time_s", "1"},
                      {"roofline.plan.model", "DeepSeek-V3"},
                      {"roofline.plan.gpus", "2048"},
                      {"roofline.plan.pp", "8"},
                      {"roofline.plan.ep", "64"},
                      {"roofline.plan.schedule", s}});
  const auto t = table(axes, points, {"", "", ""});
  const std::string title = default_title(t, axes, {"train.global_batch=16384"});
  EXPECT_EQ(title, "DeepSeek-V3, 2048 GPUs, PP 8, EP 64, by schedule; train.global_batch=16384");
  for (const char* s : {"1f1b", "interleaved", "dualpipev"}) EXPECT_EQ(title.find(s), std::string::npos) << s;

  // A grid over PP changes GPUs per stage, not GPUs: PP leaves the title, the rest stays.
  const std::vector<GridAxis> pp = {{"parallel.pp", {"4", "8"}}};
  std::vector<std::map<std::string, std::string>> pts;
  for (const std::string v : {"4", "8"})
    pts.push_back({{"roofline.plan.model", "M"}, {"roofline.plan.gpus", "64"}, {"roofline.plan.pp", v},
                   {"roofline.plan.ep", "8"}, {"roofline.plan.schedule", "1f1b"}});
  EXPECT_EQ(default_title(table(pp, pts, {"", ""}), pp, {}), "M, 64 GPUs, EP 8, 1f1b, by parallel.pp");
}

// A plan that does not fit in memory reaches the chart flagged (hollow, "OOM"), on its simulation
// and roofline points alike, and is never the fastest point, even when it is the quickest.
TEST(SweepPlot, OutOfMemoryPointsAreFlaggedAndNeverTheFastest) {
  const std::vector<GridAxis> axes = {{"parallel.tp", {"1", "2", "4"}}};
  const auto t = table(axes,
                       {{{"step_time_s", "5"}, {"roofline.step_time_s", "4"}, {"memory.fits", "false"}},
                        {{"step_time_s", "6"}, {"roofline.step_time_s", "5"}, {"memory.fits", "true"}},
                        {{"step_time_s", "7"}, {"roofline.step_time_s", "6"}, {"memory.fits", "true"}}},
                       {"", "", ""});
  const auto c = sweep_chart(t, axes, "parallel.tp", {"step_time_s"}, "t");
  ASSERT_EQ(c.series.size(), 2u);
  for (const auto& s : c.series) EXPECT_EQ(s.out_of_memory, (std::vector<bool>{true, false, false})) << s.label;
  EXPECT_TRUE(out_of_memory(t, 0));
  EXPECT_FALSE(out_of_memory(t, 1));
  EXPECT_EQ(fastest_fitting_row(t), 1);  // TP 2 (6 s), not TP 1 (5 s, out of memory)

  // Every point out of memory: none is the fastest. A workload without a memory model (no
  // memory.fits column) is not out of memory.
  const auto all = table(axes,
                         {{{"step_time_s", "5"}, {"memory.fits", "false"}},
                          {{"step_time_s", "6"}, {"memory.fits", "false"}},
                          {{"step_time_s", "7"}, {"memory.fits", "false"}}},
                         {"", "", ""});
  EXPECT_EQ(fastest_fitting_row(all), -1);
  const auto none = table(axes, {{{"step_time_s", "5"}}, {{"step_time_s", "4"}}, {{"step_time_s", "7"}}}, {"", "", ""});
  EXPECT_FALSE(out_of_memory(none, 0));
  EXPECT_EQ(fastest_fitting_row(none), 1);
}

TEST(SweepPlot, UnitsAreCheckedFromTheFieldNamesAlone) {
  EXPECT_EQ(unit_of("step_time_s"), "s");
  EXPECT_EQ(unit_of("exposed_comm_share"), "%");
  EXPECT_EQ(unit_of("memory.peak_bytes"), "bytes");
  EXPECT_EQ(unit_of("mfu"), "");
  EXPECT_NO_THROW(check_plot_units({"step_time_s", "bubble_s", "exposed_comm_share"}));
  EXPECT_THROW(check_plot_units({"step_time_s", "exposed_comm_share", "memory.peak_bytes"}), ConfigError);
}

}  // namespace
}  // namespace stepsim::sweep
