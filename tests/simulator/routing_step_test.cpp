// Uneven expert loads in the replay: skew slows the step monotonically, a hot expert's extra rows
// show up as GEMM time on the GPU that owns it, and one EP group per rank stands for all of them.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

// DeepSeek-V3 cut to 8 layers (3 dense, 5 MoE) on 4 nodes: DualPipeV over 2 ranks, EP 16 = one
// EP group per rank, 4 microbatches of one sequence per replica.
std::vector<std::string> small(std::vector<std::string> sets) {
  std::vector<std::string> base = {"model.num_hidden_layers=8", "cluster.nodes=4",       "parallel.pp=2",
                                   "parallel.ep=16",            "train.global_batch=64", "parallel.microbatches=4"};
  base.insert(base.end(), sets.begin(), sets.end());
  return base;
}

SimResult run(const std::vector<std::string>& sets) {
  const Plan plan = load_plan(default_config_path(), sets);
  return in_child([&] { return simulate(plan, SimOptions{true, false}); });
}

TEST(RoutingStep, StepTimeRisesWithZipfSkew) {
  double previous = 0;
  for (const char* s : {"0", "0.5", "1.0", "1.5"}) {
    const SimResult r = run(small({"scenario.routing=zipf", std::string("scenario.zipf_s=") + s}));
    expect_exact_split(r);
    EXPECT_GT(r.step_time_s, previous * 1.001) << "zipf_s " << s;
    previous = r.step_time_s;
  }
}

TEST(RoutingStep, AHotExpertsRowsBecomeGemmTimeOnItsGpu) {
  // One expert takes half the rows of every layer (layer_correlation 1: the same expert, so the
  // same GPU, in every layer). Its GPU gets 0.5 + 15 x 0.5 / 255 of the group's rows (its own
  // 16 experts), against 1 / 16 balanced. Extra routed GEMM time on that GPU, summed over the two
  // ranks: 5 MoE layers x 4 microbatches x n rows x (share - 1/16) x 6 x expert params (forward,
  // input and weight gradients, 2 FLOPs per parameter each) / FP8 rate. Comm takes no SMs here.
  const SimResult hot = run(small({"scenario.routing=hot", "scenario.hot_experts=1", "scenario.hot_share=0.5",
                                   "scenario.layer_correlation=1", "sim.mode=full"}));
  const SimResult flat = run(small({"sim.mode=full"}));
  const double n = 16.0 * 4096 * 8, expert_params = 3.0 * 7168 * 2048, fp8 = 1456.6e12;
  const double share = 0.5 + 15 * 0.5 / 255;
  const double extra = 5 * 4 * n * (share - 1.0 / 16) * 6 * expert_params / fp8;
  double hot_compute = 0, flat_compute = 0;
  for (int64_t rank = 0; rank < 2; ++rank) {
    double most = 0, flat_any = 0;
    for (const auto& rr : hot.ranks)
      if (rr.rank / 16 == rank) most = std::max(most, rr.compute_s);
    for (const auto& rr : flat.ranks)
      if (rr.rank / 16 == rank) flat_any = rr.compute_s;
    hot_compute += most;
    flat_compute += flat_any;
  }
  // Multinomial noise on ~262k hot rows per microbatch: well under 0.5 %.
  EXPECT_NEAR(hot_compute - flat_compute, extra, 0.01 * extra);
  EXPECT_GT(hot.step_time_s, flat.step_time_s);
}

TEST(RoutingStep, OneEpGroupPerRankStandsForTheOthers) {
  // 8 nodes: two EP groups per rank. Both run the same loads, so replaying group 0 of each rank
  // (32 GPUs) gives the full replay's step, but for the DP collectives with the other group: their
  // flows to and from mirrored GPUs start when the simulated end posts (measured 1.6 % here, where
  // DP is a quarter of the step; 2 % tolerance).
  const auto sets = [](const char* mode) {
    return std::vector<std::string>{"model.num_hidden_layers=8", "cluster.nodes=8",          "parallel.pp=2",
                                    "parallel.ep=16",            "train.global_batch=128",   "parallel.microbatches=4",
                                    "scenario.routing=zipf",     std::string("sim.mode=") + mode};
  };
  const SimResult reduced = run(sets("auto"));
  const SimResult full = run(sets("full"));
  EXPECT_EQ(reduced.ranks.size(), 32u);
  EXPECT_EQ(full.ranks.size(), 64u);
  EXPECT_NE(reduced.mode.find("EP group 0 of every pipeline rank"), std::string::npos) << reduced.mode;
  EXPECT_NEAR(reduced.step_time_s, full.step_time_s, 0.02 * full.step_time_s);
}

}  // namespace
}  // namespace stepsim::test
