// The Chrome trace holds one complete event per replayed op, on the right GPU and stream, and its
// durations add up to the compute the replay reports; ranks and a time window select what it holds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "vocabulary/config_error.hpp"
#include "tests/simulator/sim_test_util.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_selection.hpp"

namespace stepsim::test {
namespace {

Synthetic four_rank_dualpipev() {
  Synthetic s{.schedule = "dualpipev", .pp = 4, .microbatches = 8, .send_bytes = 1e6};
  return s;
}

nlohmann::json trace_json(const SimResult& r, const TraceOptions& o) {
  std::stringstream out;
  write_chrome_trace(r, o, out);
  return nlohmann::json::parse(out.str());
}

TEST(ChromeTrace, OneEventPerOpWithComputeAddingUp) {
  const SimResult r = run_synthetic(four_rank_dualpipev(), /*spans=*/true);
  TraceOptions o;
  o.gpus_per_node = 1;
  const auto j = trace_json(r, o);
  size_t ops = 0;
  std::vector<double> compute_us(4, 0.0);
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] == "idle") continue;
    ++ops;
    if (e["tid"] == 0) compute_us[e["pid"].get<size_t>()] += e["dur"].get<double>();
  }
  EXPECT_EQ(ops, r.spans.size());
  for (const auto& rank : r.ranks) EXPECT_NEAR(compute_us[size_t(rank.rank)] * 1e-6, rank.compute_s, 1e-6);
  // Every node (here one GPU each) is named for the viewer.
  size_t process_names = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") ++process_names;
  EXPECT_EQ(process_names, 4u);
}

TEST(ChromeTrace, RanksAndWindowSelectEvents) {
  const SimResult r = run_synthetic(four_rank_dualpipev(), /*spans=*/true);
  TraceOptions o;
  o.gpus_per_node = 1;
  o.ranks = {1, 3};
  o.window_begin_s = 0.25 * r.step_time_s;
  o.window_end_s = 0.5 * r.step_time_s;
  const auto j = trace_json(r, o);
  // What should be there, counted from the spans themselves.
  size_t expected = 0;
  for (const Span& s : r.spans)
    if ((s.rank == 1 || s.rank == 3) && s.end_s >= o.window_begin_s && s.start_s <= o.window_end_s) ++expected;
  size_t ops = 0;
  for (const auto& e : j["traceEvents"]) {
    const int64_t pid = e["pid"].get<int64_t>();
    EXPECT_TRUE(pid == 1 || pid == 3) << e.dump();
    if (e["ph"] != "X") continue;
    const double a = e["ts"].get<double>() * 1e-6, b = a + e["dur"].get<double>() * 1e-6;
    EXPECT_GE(b, o.window_begin_s - 1e-9);
    EXPECT_LE(a, o.window_end_s + 1e-9);
    if (e["cat"] != "idle") ++ops;
  }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(ops, expected);
}

TEST(ChromeTrace, OnlyTheRequestedGpusAreRecorded) {
  const Plan plan = synthetic_plan(four_rank_dualpipev());
  const SimResult r = in_child([&] {
    SimOptions opt;
    opt.quiet = true;
    opt.record_spans = true;
    opt.span_ranks = {2};
    return simulate(plan, opt);
  });
  ASSERT_FALSE(r.spans.empty());
  for (const Span& s : r.spans) EXPECT_EQ(s.rank, 2);
  for (const IdleSpan& s : r.idle_spans) EXPECT_EQ(s.rank, 2);
}

TEST(TraceSelection, ParsesRankListsAndWindows) {
  const Plan plan = load_plan(default_config_path());
  const TraceOptions d = trace_options(plan, "", "");
  // Default: one GPU per pipeline rank of replica 0 (dp = 2048 / 8 = 256).
  EXPECT_EQ(d.ranks, (std::vector<int32_t>{0, 256, 512, 768, 1024, 1280, 1536, 1792}));
  EXPECT_EQ(d.gpus_per_node, 8);
  const TraceOptions o = trace_options(plan, "64,0-3,2", "1.0:2.5");
  EXPECT_EQ(o.ranks, (std::vector<int32_t>{0, 1, 2, 3, 64}));
  EXPECT_DOUBLE_EQ(o.window_begin_s, 1.0);
  EXPECT_DOUBLE_EQ(o.window_end_s, 2.5);
  EXPECT_DOUBLE_EQ(trace_options(plan, "", ":3").window_end_s, 3.0);
  for (const char* bad : {"3-1", "x", "0-2048", "1,", "-1", "1-"})
    EXPECT_THROW(trace_options(plan, bad, ""), ConfigError) << bad;
  for (const char* bad : {"2:1", "abc", "1", "1:2:3", "-1:2"}) EXPECT_THROW(trace_options(plan, "", bad), ConfigError) << bad;
}

}  // namespace
}  // namespace stepsim::test
