// The announcement before a long replay ("about N s") scales the activities the workload expects
// (compute ops plus transfers, counted by emitting one program per pipeline rank) by a measured
// rate. Reference: the activities the replay itself counted as it ran them, on full replays where
// no flow goes to a mirrored GPU: balanced routing (ring-equivalent flows, NVLink legs left out
// under sim.fidelity=fast or kept under exact) and skewed routing (one flow per EP peer).
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim::test {
namespace {

void expect_count_matches_replay(const std::vector<std::string>& more) {
  std::vector<std::string> sets = {"model.num_hidden_layers=6", "cluster.nodes=16",       "parallel.pp=2",
                                   "schedule=1f1b",             "parallel.microbatches=4", "train.global_batch=256",
                                   "sim.mode=full"};
  sets.insert(sets.end(), more.begin(), more.end());
  const Plan plan = load_plan(default_config_path(), sets);
  const double expected = ModelWorkload(plan).expected_activities();
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  ASSERT_EQ(r.ranks.size(), 128u) << r.mode;
  EXPECT_EQ(expected, double(r.activities));
  EXPECT_GT(expected, double(r.ops) / 2);  // not the ops count by another name
}

TEST(ReplaySize, ExpectedActivitiesAreTheOnesTheReplayRuns) {
  expect_count_matches_replay({"sim.fidelity=fast"});
  expect_count_matches_replay({"sim.fidelity=exact"});
  expect_count_matches_replay({"scenario.routing=zipf"});
}

}  // namespace
}  // namespace stepsim::test
