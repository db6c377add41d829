// scenario.stragglers and scenario.jitter_sigma: a list of maps read key by key, every bad item
// rejected with one line naming the item key (scenario.stragglers[i].key) and a fix.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

Plan with(std::vector<std::string> sets) { return load_plan(default_yaml(), sets); }

std::string error_of(const std::vector<std::string>& sets) {
  return config_error_of([&] { with(sets); });
}

void expect_line(const std::string& msg, std::initializer_list<const char*> pieces) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const char* p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST(StragglerConfig, ParsesItemsFromSet) {
  const Plan p = with({"scenario.stragglers=[{gpu: 5, clock: 0.8}, {node: 17, nic_GBps: 25, from_s: 1.0}, "
                       "{gpu: 9, nic: down, via: 12}]",
                       "scenario.jitter_sigma=0.05"});
  ASSERT_EQ(p.scenario.stragglers.size(), 3u);
  const Straggler& a = p.scenario.stragglers[0];
  EXPECT_EQ(a.gpu, 5);
  EXPECT_EQ(a.node, -1);
  EXPECT_EQ(a.clock, 0.8);
  EXPECT_EQ(a.from_s, 0);
  EXPECT_TRUE(std::isinf(a.to_s));
  const Straggler& b = p.scenario.stragglers[1];
  EXPECT_EQ(b.node, 17);
  EXPECT_EQ(b.nic_GBps, 25);
  EXPECT_EQ(b.clock, 1);
  EXPECT_EQ(b.from_s, 1.0);
  const Straggler& c = p.scenario.stragglers[2];
  EXPECT_TRUE(c.nic_down);
  EXPECT_EQ(c.via, 12);
  EXPECT_EQ(p.scenario.jitter_sigma, 0.05);
  EXPECT_TRUE(p.scenario.perturbed());
  EXPECT_FALSE(with({}).scenario.perturbed());  // the default config is unperturbed
}

TEST(StragglerConfig, ReadsTheListFromAFile) {
  const std::string text = replaced(default_text(), "scenario:", "scenario:\n  stragglers:\n    - {gpu: 3, clock: 0.5, from_s: 2, to_s: 4}\n");
  const TempFile g("t.yaml", text);
  const Plan p = load_plan(g.path(), {});
  ASSERT_EQ(p.scenario.stragglers.size(), 1u);
  EXPECT_EQ(p.scenario.stragglers[0].to_s, 4);
  // A file's item errors name the file.
  const TempFile bad("u.yaml", replaced(default_text(), "scenario:", "scenario:\n  stragglers:\n    - {gpu: 3, clock: 0}\n"));
  expect_line(config_error_of([&] { load_plan(bad.path(), {}); }), {"u.yaml", "scenario.stragglers[0].clock", "greater than zero"});
}

TEST(StragglerConfig, RejectsBadItemsNamingTheItemKey) {
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: 0.9}, {gpu: 2, clock: 0}]"}),
              {"--set", "scenario.stragglers[1].clock", "greater than zero"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: -0.5}]"}), {"scenario.stragglers[0].clock"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, speed: 0.5}]"}),
              {"scenario.stragglers[0].speed", "unknown key", "clock"});
  expect_line(error_of({"scenario.stragglers=[{gpu: one, clock: 0.5}]"}),
              {"scenario.stragglers[0].gpu", "expected an integer"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: fast}]"}), {"scenario.stragglers[0].clock", "number"});
  expect_line(error_of({"scenario.stragglers=[{node: 2, nic_GBps: -25}]"}),
              {"scenario.stragglers[0].nic_GBps", "greater than zero"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: 0.5, from_s: 3, to_s: 2}]"}),
              {"scenario.stragglers[0].to_s", "greater than from_s"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1}]"}), {"scenario.stragglers[0]", "clock"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, node: 0, clock: 0.5}]"}), {"scenario.stragglers[0]", "exactly one"});
  expect_line(error_of({"scenario.stragglers=[{clock: 0.5}]"}), {"scenario.stragglers[0]", "exactly one"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, nic: off}]"}), {"scenario.stragglers[0].nic", "down"});
  expect_line(error_of({"scenario.stragglers=[{node: 1, nic: down}]"}), {"scenario.stragglers[0].nic", "gpu"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: 0.5, via: 2}]"}), {"scenario.stragglers[0].via", "nic: down"});
  expect_line(error_of({"scenario.stragglers={gpu: 1, clock: 0.5}"}), {"scenario.stragglers", "list of maps"});
  expect_line(error_of({"scenario.stragglers=[5]"}), {"scenario.stragglers[0]", "expected a map"});
  expect_line(error_of({"scenario.jitter_sigma=-0.1"}), {"scenario.jitter_sigma", "negative"});
}

TEST(StragglerConfig, RejectsIdsOutsideTheCluster) {
  // The default cluster: 256 nodes x 8 GPUs.
  expect_line(error_of({"scenario.stragglers=[{gpu: 2048, clock: 0.8}]"}),
              {"deepseek-v3.yaml", "scenario.stragglers[0].gpu", "0 to 2047"});
  expect_line(error_of({"scenario.stragglers=[{node: 256, clock: 0.8}]"}), {"scenario.stragglers[0].node", "0 to 255"});
  // The synthetic pipeline has parallel.pp one-GPU nodes.
  expect_line(error_of({"workload.kind=synthetic", "parallel.pp=4", "scenario.stragglers=[{gpu: 4, clock: 0.8}]"}),
              {"scenario.stragglers[0].gpu", "0 to 3"});
  expect_line(error_of({"workload.kind=synthetic", "parallel.pp=4", "scenario.stragglers=[{gpu: 1, nic: down}]"}),
              {"scenario.stragglers[0].nic", "one-GPU node"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 3, nic: down, via: 9}]"}),
              {"scenario.stragglers[0].via", "not another GPU of node 0"});
  expect_line(error_of({"scenario.stragglers=[{gpu: 3, nic: down, via: 4}, {gpu: 4, nic: down}]"}),
              {"scenario.stragglers[0].via", "down too"});
}

// Clock items acting on one GPU at once multiply; each is in [0.001, 1000], and so must their
// product be (one that underflows hands SimGrid a speed of 0, which aborts it).
TEST(StragglerConfig, ClocksActingTogetherStayInRange) {
  // 0.01 x 0.01 = 1e-4 on GPU 1 from 0 s.
  expect_line(error_of({"scenario.stragglers=[{gpu: 1, clock: 0.01}, {gpu: 1, clock: 0.01}]"}),
              {"scenario.stragglers", "GPU 1", "multiply to 0.0001", "0.001 to 1000"});
  // A node item and a GPU item of that node: 0.02 x 0.02 = 4e-4 on GPU 9 (node 1) from 2 s.
  expect_line(error_of({"scenario.stragglers=[{node: 1, clock: 0.02}, {gpu: 9, clock: 0.02, from_s: 2}]"}),
              {"GPU 9", "at 2 s", "multiply to 0.0004"});
  // Two node items: 40 x 40 = 1600 > 1000.
  expect_line(error_of({"scenario.stragglers=[{node: 3, clock: 40}, {node: 3, clock: 40}]"}), {"node 3", "multiply to 1600"});
  // Windows that do not overlap never multiply; 0.05 x 0.05 = 0.0025 is in range.
  EXPECT_NO_THROW(load_plan(default_config_path(), {"scenario.stragglers=[{gpu: 1, clock: 0.01, to_s: 1}, "
                                                    "{gpu: 1, clock: 0.01, from_s: 1}]"}));
  EXPECT_NO_THROW(load_plan(default_config_path(), {"scenario.stragglers=[{gpu: 1, clock: 0.05}, {node: 0, clock: 0.05}]"}));
}

TEST(StragglerConfig, ReducedModeCannotReplayAPerturbedStep) {
  expect_line(error_of({"sim.mode=reduced", "scenario.stragglers=[{gpu: 5, clock: 0.8}]"}), {"sim.mode", "full"});
  expect_line(error_of({"sim.mode=reduced", "scenario.jitter_sigma=0.1"}), {"sim.mode", "full"});
  EXPECT_NO_THROW(with({"sim.mode=auto", "scenario.jitter_sigma=0.1"}));
}

}  // namespace
}  // namespace stepsim::test
