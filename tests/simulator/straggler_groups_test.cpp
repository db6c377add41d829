// sim.mode=auto with stragglers replays only the EP groups holding a perturbed GPU (with their
// pipeline rows) and mirrors the others. Held to the full replay of the same plan, which is the
// reference: an 8-layer plan with two EP groups of 8 per pipeline rank (32 GPUs, 16 replayed).
// A slow clock only delays the perturbed group, so the two must agree to rounding; a slow NIC
// also shifts when the DP collectives' flows from mirrored replicas arrive relative to the
// perturbed group's kernels, so the step agrees to rounding and the exposed/bubble split within
// 2 % of the exposed time.
#include <gtest/gtest.h>

#include <map>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

std::vector<std::string> two_groups(const std::string& stragglers, const std::string& mode,
                                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {"model.num_hidden_layers=8", "cluster.nodes=4", "parallel.pp=2", "parallel.ep=8",
                                   "train.global_batch=64", "parallel.microbatches=4",
                                   "scenario.stragglers=" + stragglers, "sim.mode=" + mode};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return sets;
}

void expect_groups_match_full(const std::string& stragglers, double split_tolerance,
                              const std::vector<std::string>& extra = {}) {
  const Plan part = load_plan(default_config_path(), two_groups(stragglers, "auto", extra));
  const Plan full = load_plan(default_config_path(), two_groups(stragglers, "full", extra));
  const SimResult a = in_child([&] { return simulate(part, SimOptions{true, false}); });
  const SimResult f = in_child([&] { return simulate(full, SimOptions{true, false}); });
  ASSERT_EQ(f.ranks.size(), 32u);
  ASSERT_EQ(a.ranks.size(), 16u) << a.mode;  // one of the two groups on each of the two ranks
  EXPECT_NEAR(a.step_time_s, f.step_time_s, 1e-9 * f.step_time_s);
  EXPECT_NEAR(a.stragglers.baseline_step_s, f.stragglers.baseline_step_s, 1e-9 * f.step_time_s);
  std::map<int64_t, const RankResult*> by_rank;
  for (const RankResult& r : f.ranks) by_rank[r.rank] = &r;
  for (const RankResult& r : a.ranks) {
    const RankResult& ref = *by_rank.at(r.rank);
    EXPECT_NEAR(r.compute_s, ref.compute_s, 1e-9 * f.step_time_s) << "rank " << r.rank;
    EXPECT_NEAR(r.exposed_comm_s, ref.exposed_comm_s, split_tolerance * ref.exposed_comm_s + 1e-9) << "rank " << r.rank;
    EXPECT_NEAR(r.bubble_s, ref.bubble_s, split_tolerance * ref.exposed_comm_s + 1e-9) << "rank " << r.rank;
    EXPECT_EQ(r.memory.peak_bytes, ref.memory.peak_bytes) << "rank " << r.rank;
  }
  ASSERT_FALSE(a.stragglers.root_causes.empty());
  EXPECT_EQ(a.stragglers.root_causes[0].gpu, f.stragglers.root_causes[0].gpu);
  expect_exact_split(a);
}

TEST(StragglerGroups, SlowClockReplaysItsGroupsAndMatchesFull) {
  expect_groups_match_full("[{gpu: 3, clock: 0.7}]", 1e-9);
}

TEST(StragglerGroups, SlowNicReplaysItsGroupsAndKeepsTheStep) {
  expect_groups_match_full("[{gpu: 20, nic_GBps: 10}]", 0.02);
}

// Leaf-spine cables at a 1:1 fat tree with one node per leaf: leaf 0 holds node 0, which is EP
// group 0 of pipeline rank 0. Six of its eight cables down leave the NICs under it (and only
// theirs) a quarter of their uplink share, so its groups are the perturbed ones; as with a slow
// NIC, the step agrees to rounding. The faults must show: the leaf's cross-leaf DP and pipeline
// traffic moves at a quarter of its rate, so the step is longer than the baseline.
TEST(StragglerGroups, CablesDownReplayTheGroupsUnderTheirLeaf) {
  std::string cables = "[";
  for (int spine = 1; spine <= 6; ++spine)
    cables += std::string(spine > 1 ? ", " : "") + "{leaf: 0, spine: " + std::to_string(spine) + ", link: down}";
  cables += "]";
  const std::vector<std::string> tree = {"cluster.topology=fat-tree", "cluster.leaf_nics=8"};
  expect_groups_match_full(cables, 0.02, tree);
  const SimResult r = in_child([&] {
    return simulate(load_plan(default_config_path(), two_groups(cables, "auto", tree)), SimOptions{true, false});
  });
  EXPECT_GT(r.step_time_s, 1.02 * r.stragglers.baseline_step_s);
}

// A straggler in every group leaves nothing to mirror: every GPU is replayed.
TEST(StragglerGroups, PerturbedEverywhereReplaysEveryGpu) {
  const Plan plan = load_plan(default_config_path(), two_groups("[{gpu: 3, clock: 0.9}, {gpu: 12, clock: 0.9}]", "auto"));
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  EXPECT_EQ(r.ranks.size(), 32u) << r.mode;
}

}  // namespace
}  // namespace stepsim::test
