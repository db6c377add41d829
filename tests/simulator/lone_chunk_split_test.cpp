// parallel.split_lone_chunks: warm-up and cool-down chunks as two overlapping half-microbatches.
// The split moves no FLOP and no byte, so per-rank compute is unchanged; it only hides all-to-all
// that DualPipe's reference order leaves exposed outside F&B pairs.
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

SimResult run(bool split, const std::string& schedule = "dualpipev") {
  const Plan plan = load_plan(default_config_path(), {"parallel.split_lone_chunks=" + std::string(split ? "true" : "false"),
                                                      "schedule=" + schedule});
  return in_child([&] { return simulate(plan, SimOptions{true, false}); });
}

// Exposed EP all-to-all over every rank.
double exposed_ep_sum(const SimResult& r) {
  double s = 0;
  for (const auto& rank : r.ranks) s += rank.exposed_s[ops::CommClass::Ep];
  return s;
}

TEST(LoneChunkSplit, SameWorkLessExposedAllToAllInDualPipeV) {
  const SimResult whole = run(false), split = run(true);
  ASSERT_EQ(whole.ranks.size(), split.ranks.size());
  for (size_t i = 0; i < whole.ranks.size(); ++i) {
    // Same FLOPs on every rank (no SM tax at speed of light, so busy time is FLOPs / rate).
    EXPECT_NEAR(split.ranks[i].compute_s, whole.ranks[i].compute_s, 1e-9 * whole.ranks[i].compute_s);
    // Only the lone chunks change: their exposed all-to-all shrinks on every rank.
    EXPECT_LT(split.ranks[i].exposed_unpaired_s, whole.ranks[i].exposed_unpaired_s);
  }
  expect_exact_split(split);
  EXPECT_LT(exposed_ep_sum(split), exposed_ep_sum(whole));
  EXPECT_LT(split.step_time_s, whole.step_time_s);
}

TEST(LoneChunkSplit, OneFOneBHidesBackwardAllToAllButNotAllOfForward) {
  // 1F1B has no F&B pairs: every chunk is lone. Per MoE layer and 4096-token microbatch the
  // forward all-to-all moves 21.5 KB per token to each of ~3.46 remote nodes at 50 GB/s (~6.1 ms)
  // while the forward computes ~0.58e9 activated parameters x 2 FLOP per token at 1456.6 TFLOP/s
  // plus attention (~4.2 ms): halves can hide at most ~4.2 / 6.1 of it. The backward's all-to-all
  // (same bytes, twice the compute) can hide fully. So the exposed all-to-all falls to roughly
  // (6.1 - 4.2) / (2 x 6.1) ~ 16 % of before, plus the halves' start and end: between 5 % and 60 %.
  const SimResult whole = run(false, "1f1b"), split = run(true, "1f1b");
  EXPECT_LT(exposed_ep_sum(split), 0.6 * exposed_ep_sum(whole));
  EXPECT_GT(exposed_ep_sum(split), 0.05 * exposed_ep_sum(whole));
}

}  // namespace
}  // namespace stepsim::test
