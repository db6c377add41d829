// The Chrome trace holds one complete event per replayed op, on the right GPU and stream, and its
// durations add up to the compute the replay reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/simulator/sim_test_util.hpp"
#include "traces/chrome_trace.hpp"

namespace stepsim::test {
namespace {

TEST(ChromeTrace, OneEventPerOpWithComputeAddingUp) {
  Synthetic s;
  s.schedule = "dualpipev";
  s.pp = 4;
  s.microbatches = 8;
  s.send_bytes = 1e6;
  const SimResult r = run_synthetic(s, /*spans=*/true);
  std::stringstream out;
  write_chrome_trace(r, out);
  const auto j = nlohmann::json::parse(out.str());
  size_t complete = 0;
  std::vector<double> compute_us(4, 0.0);
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    if (e["tid"] == 0) compute_us[e["pid"].get<size_t>()] += e["dur"].get<double>();
  }
  EXPECT_EQ(complete, r.spans.size());
  for (const auto& rank : r.ranks) EXPECT_NEAR(compute_us[size_t(rank.rank)] * 1e-6, rank.compute_s, 1e-6);
  // Every GPU and stream is named for the viewer.
  size_t process_names = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") ++process_names;
  EXPECT_EQ(process_names, 4u);
}

}  // namespace
}  // namespace stepsim::test
