// SimOptions::progress: the progress line's figures for a caller that shows them its own way (the
// Python module). Reference: the replay's own result -- its last update is the end of the replay
// (every op done, the step's simulated time, share 1), and the callback is called even when the
// stderr line is off (quiet).
#include <gtest/gtest.h>

#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim::test {
namespace {

TEST(ProgressCallback, EndsWithTheWholeReplayEvenWhenQuiet) {
  const Plan plan = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                              {"model.num_hidden_layers=8", "parallel.microbatches=4"});
  std::vector<engine::ProgressUpdate> seen;
  SimOptions options;
  options.quiet = true;
  options.progress = [&seen](const engine::ProgressUpdate& u) { seen.push_back(u); };
  const SimResult r = simulate(plan, options);
  ASSERT_FALSE(seen.empty());
  const engine::ProgressUpdate& last = seen.back();
  EXPECT_EQ(last.share, 1.0);
  EXPECT_EQ(last.eta_s, 0.0);
  EXPECT_EQ(last.ops_done, r.ops);
  EXPECT_NEAR(last.simulated_s, r.step_time_s, 1e-9 * r.step_time_s);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].wall_s, seen[i - 1].wall_s);
    EXPECT_GE(seen[i].ops_done, seen[i - 1].ops_done);
  }
}

}  // namespace
}  // namespace stepsim::test
