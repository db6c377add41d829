// Lazy compute (simulator/engine/gpu_actor.cpp): a compute op nobody waits on completes without
// waking its GPU's actor at its end; the actor completes it later, at its own end time. The
// reference is the eager replay, which a trace recording forces (spans are recorded in event
// order, so a trace turns lazy completion off): the same ops, the same step and the same per-GPU
// split to rounding (the eager replay's wake-ups land within an ulp of each op's end, the lazy
// one uses the end itself), on plans whose compute stream chains ops differently.
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

SimResult run(const std::vector<std::string>& sets, bool trace) {
  const Plan plan = load_plan(default_config_path(), sets);
  return in_child([&] { return simulate(plan, SimOptions{true, trace}); });
}

void expect_same(const std::vector<std::string>& sets) {
  const SimResult eager = run(sets, true);
  const SimResult lazy = run(sets, false);
  const double tol = 1e-12 * eager.step_time_s;
  EXPECT_NEAR(lazy.step_time_s, eager.step_time_s, tol);
  EXPECT_EQ(lazy.ops, eager.ops);
  EXPECT_EQ(lazy.activities, eager.activities);
  ASSERT_EQ(lazy.ranks.size(), eager.ranks.size());
  for (size_t i = 0; i < eager.ranks.size(); ++i) {
    const RankResult &a = lazy.ranks[i], &b = eager.ranks[i];
    EXPECT_NEAR(a.step_time_s, b.step_time_s, tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.compute_s, b.compute_s, tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.exposed_comm_s, b.exposed_comm_s, tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.bubble_s, b.bubble_s, tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.comm_s[ops::CommClass::Ep], b.comm_s[ops::CommClass::Ep], tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.comm_s[ops::CommClass::Pp], b.comm_s[ops::CommClass::Pp], tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.comm_s[ops::CommClass::Dp], b.comm_s[ops::CommClass::Dp], tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.exposed_s[ops::CommClass::Ep], b.exposed_s[ops::CommClass::Ep], tol) << "GPU " << b.rank;
    EXPECT_NEAR(a.exposed_s[ops::CommClass::Pp], b.exposed_s[ops::CommClass::Pp], tol) << "GPU " << b.rank;
  }
  // Who waited for whom (reported for every plan): the same peers and roots, the same seconds.
  const auto& wa = lazy.stragglers.rank_waits;
  const auto& wb = eager.stragglers.rank_waits;
  ASSERT_EQ(wa.size(), wb.size());
  for (size_t i = 0; i < wb.size(); ++i) {
    EXPECT_EQ(wa[i].peer, wb[i].peer) << "GPU " << wb[i].rank;
    EXPECT_EQ(wa[i].root, wb[i].root) << "GPU " << wb[i].rank;
    EXPECT_NEAR(wa[i].waited_s, wb[i].waited_s, tol) << "GPU " << wb[i].rank;
    EXPECT_NEAR(wa[i].root_s, wb[i].root_s, tol) << "GPU " << wb[i].rank;
  }
  ASSERT_EQ(lazy.stragglers.waited_for.size(), eager.stragglers.waited_for.size());
  for (size_t i = 0; i < eager.stragglers.waited_for.size(); ++i) {
    EXPECT_EQ(lazy.stragglers.waited_for[i].gpu, eager.stragglers.waited_for[i].gpu);
    EXPECT_NEAR(lazy.stragglers.waited_for[i].waited_s, eager.stragglers.waited_for[i].waited_s, tol);
  }
}

const std::vector<std::string> kSmall = {"model.num_hidden_layers=7", "cluster.nodes=16", "parallel.pp=2",
                                         "parallel.microbatches=4", "train.global_batch=256"};

std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
  base.insert(base.end(), more);
  return base;
}

TEST(LazyCompute, DefaultStepMatchesTheEagerReplay) { expect_same({}); }

TEST(LazyCompute, FullReplayWithPlainBackwardMatchesTheEagerReplay) {
  expect_same(with(kSmall, {"sim.mode=full", "schedule=1f1b", "parallel.split_backward=false"}));
}

TEST(LazyCompute, SkewedRoutingOnAFatTreeMatchesTheEagerReplay) {
  expect_same(with(kSmall, {"scenario.routing=zipf", "cluster.topology=fat-tree"}));
}

}  // namespace
}  // namespace stepsim::test
