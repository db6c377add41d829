// sim.fidelity=fast leaves out the NVLink leg of a balanced all-to-all when its IB leg outlasts it
// on idle ports and every GPU of the group runs in lock step. The reference is the exact replay
// (sim.fidelity=exact, every flow): the fast one must give the same step, the same per-GPU split
// and the same EP transfer time to rounding, with fewer SimGrid activities; and where the condition
// does not hold (NVLink slower than IB, a straggler) it must replay every flow.
//
// Plan: 16 nodes, EP 64 (two groups per pipeline rank, eight nodes each), two pipeline ranks of
// 64 GPUs, 6 layers (the last 3 MoE), every GPU replayed (sim.mode=full) so that NVLink peers are simulated
// GPUs, not mirrors.
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

std::vector<std::string> plan_sets(const std::string& fidelity, std::vector<std::string> more = {}) {
  std::vector<std::string> s = {"model.num_hidden_layers=6", "cluster.nodes=16",       "parallel.pp=2",
                                "schedule=1f1b",             "parallel.microbatches=4", "train.global_batch=256",
                                "sim.mode=full",             "sim.fidelity=" + fidelity};
  s.insert(s.end(), more.begin(), more.end());
  return s;
}

SimResult run(const std::vector<std::string>& sets) {
  const Plan plan = load_plan(default_config_path(), sets);
  return in_child([&] { return simulate(plan, SimOptions{true, false}); });
}

void expect_same_replay(const SimResult& fast, const SimResult& exact) {
  const double tol = 1e-9 * exact.step_time_s;
  EXPECT_NEAR(fast.step_time_s, exact.step_time_s, tol);
  ASSERT_EQ(fast.ranks.size(), exact.ranks.size());
  for (size_t i = 0; i < exact.ranks.size(); ++i) {
    EXPECT_NEAR(fast.ranks[i].compute_s, exact.ranks[i].compute_s, tol) << "GPU " << exact.ranks[i].rank;
    EXPECT_NEAR(fast.ranks[i].exposed_comm_s, exact.ranks[i].exposed_comm_s, tol) << "GPU " << exact.ranks[i].rank;
    EXPECT_NEAR(fast.ranks[i].bubble_s, exact.ranks[i].bubble_s, tol) << "GPU " << exact.ranks[i].rank;
    EXPECT_NEAR(fast.ranks[i].comm_s[ops::CommClass::Ep], exact.ranks[i].comm_s[ops::CommClass::Ep], tol) << "GPU " << exact.ranks[i].rank;
  }
  EXPECT_EQ(fast.ops, exact.ops);  // the same ops, only fewer flows in some
}

TEST(Fidelity, FastLeavesOutHiddenNvlinkLegsAndGivesTheExactStep) {
  for (const std::string topology : {"star", "fat-tree"}) {
    const SimResult exact = run(plan_sets("exact", {"cluster.topology=" + topology}));
    const SimResult fast = run(plan_sets("fast", {"cluster.topology=" + topology}));
    ASSERT_EQ(exact.ranks.size(), 128u) << exact.mode;
    expect_same_replay(fast, exact);
    // H800: a dispatch's NVLink leg (about 1.9 copies per token at 160 GB/s) is shorter than its
    // IB leg (3.5 copies per token at 50 GB/s), so every all-to-all drops a flow.
    EXPECT_LT(fast.activities, exact.activities) << topology;
  }
}

TEST(Fidelity, AnNvlinkLegThatCanBindIsKept) {
  // NVLink at 5 GB/s per direction: its leg now takes longer than the IB leg, so fast keeps it.
  const SimResult exact = run(plan_sets("exact", {"hardware.nvlink_GBps=5"}));
  const SimResult fast = run(plan_sets("fast", {"hardware.nvlink_GBps=5"}));
  EXPECT_EQ(fast.activities, exact.activities);
  EXPECT_NEAR(fast.step_time_s, exact.step_time_s, 1e-12 * exact.step_time_s);
}

TEST(Fidelity, AStragglerBreaksLockStepSoEveryFlowIsReplayed) {
  // A slow GPU's NVLink neighbours wait for it through their NVLink legs: those stay.
  const std::vector<std::string> slow = {"scenario.stragglers=[{gpu: 5, clock: 0.8}]"};
  const SimResult exact = run(plan_sets("exact", slow));
  const SimResult fast = run(plan_sets("fast", slow));
  EXPECT_EQ(fast.activities, exact.activities);
  EXPECT_NEAR(fast.step_time_s, exact.step_time_s, 1e-12 * exact.step_time_s);
}

}  // namespace
}  // namespace stepsim::test
