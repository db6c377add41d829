// parallel.stage_layers replayed: every stage runs exactly the layers given (the way a framework
// placed them), not stepsim's balance. Llama 3.1 8B's layers all cost the same, so at speed-of-light
// rates a rank's compute is its layer count times one layer's (the LM head on the last rank): the
// expected ratios are the counts themselves.
#include <gtest/gtest.h>

#include "tests/config/config_test_util.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

SimResult run(const std::string& stage_layers, std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"sim.compute=speed-of-light", "parallel.stage_layers=" + stage_layers};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return simulate_in_child(load_plan(source_path("workloads/llama-3.1-8b.yaml"), sets), false);
}

TEST(StageLayersStep, EachRankComputesExactlyTheLayersGiven) {
  // 1F1B over 4 ranks: 2, 10, 10, 10 layers (the shipped config balances 8 each).
  const SimResult r = run("[2, 10, 10, 10]");
  ASSERT_EQ(r.ranks.size(), 4u);
  expect_exact_split(r);
  const double layer = r.ranks[1].compute_s / 10;
  EXPECT_NEAR(r.ranks[0].compute_s, 2 * layer, 1e-9 * layer);
  EXPECT_NEAR(r.ranks[2].compute_s, 10 * layer, 1e-9 * layer);
  EXPECT_GT(r.ranks[3].compute_s, 10 * layer * 1.05);  // and the LM head
  // Interleaved, 2 stages per rank (stage c x 4 + r on rank r): 1 3 5 7 | 7 5 3 1 gives every rank
  // 8 layers, rank 3 the head too.
  const SimResult i = run("[1, 3, 5, 7, 7, 5, 3, 1]", {"schedule=interleaved", "parallel.virtual_stages=2"});
  ASSERT_EQ(i.ranks.size(), 4u);
  expect_exact_split(i);
  EXPECT_NEAR(i.ranks[0].compute_s, 8 * layer, 1e-9 * layer);
  EXPECT_NEAR(i.ranks[1].compute_s, 8 * layer, 1e-9 * layer);
  EXPECT_NEAR(i.ranks[2].compute_s, 8 * layer, 1e-9 * layer);
  // A stage may hold none: the last one only the head.
  const SimResult e = run("[8, 12, 12, 0]");
  expect_exact_split(e);
  EXPECT_NEAR(e.ranks[0].compute_s, 8 * layer, 1e-9 * layer);
  EXPECT_NEAR(e.ranks[1].compute_s, 12 * layer, 1e-9 * layer);
  EXPECT_LT(e.ranks[3].compute_s, 5 * layer);
}

}  // namespace
}  // namespace stepsim::test
