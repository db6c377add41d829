// The fabric from the command line: the star is today's platform byte for byte, a 1:1 fat tree
// stays within 2 % of it on the default DeepSeek-V3 step, oversubscription slows it, and a
// leaf-spine cable down is named in the report with its leaf's remaining uplink share.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/cli_runner.hpp"

namespace {

using Result = stepsim::test::CliResult;
using nlohmann::json;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

std::string without_wall_time(const std::string& s) {
  return std::regex_replace(s, std::regex("\"wall_s\": [^,\\n]*"), "\"wall_s\": X");
}

double step_of(const Result& r) { return json::parse(r.out)["step_time_s"].get<double>(); }

TEST(TopologyCli, StarIsTheDefaultAndAOneToOneFatTreeStaysWithinTwoPercent) {
  const Result plain = run("simulate --json --quiet");
  const Result star = run("simulate --json --quiet --set cluster.topology=star");
  const Result tree = run("simulate --json --quiet --set cluster.topology=fat-tree");
  const Result two = run("simulate --json --quiet --set cluster.topology=fat-tree --set cluster.oversubscription=2");
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(star.code, 0) << star.err;
  ASSERT_EQ(tree.code, 0) << tree.err;
  ASSERT_EQ(two.code, 0) << two.err;
  // The same report but for the --set values it records.
  json a = json::parse(plain.out), b = json::parse(star.out);
  EXPECT_EQ(b["sets"], json::array({"cluster.topology=star"}));
  for (json* j : {&a, &b}) j->erase("sets");
  EXPECT_EQ(without_wall_time(a.dump(2)), without_wall_time(b.dump(2)));
  EXPECT_NEAR(step_of(tree) / step_of(star), 1.0, 0.02);
  // 2:1 with four nodes per leaf: 4 of each GPU's 7 remote EP nodes climb, the all-to-all
  // takes 8/7 of its IB time, DP rings and pipeline sends twice theirs: slower, by more than 5 %.
  EXPECT_GT(step_of(two), 1.05 * step_of(star));
}

// The 8-layer DeepSeek-V3 on 4 nodes (tests/e2e/routing_cli_test.cpp) on a fat tree with one
// node per leaf: 8 cables per leaf at 1:1, each 1/8 of the leaf's 400 GB/s of uplinks.
const std::string kSmallTree =
    " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
    " --set train.global_batch=64 --set parallel.microbatches=4 --set cluster.topology=fat-tree"
    " --set cluster.leaf_nics=8";

TEST(TopologyCli, ACableDownIsNamedAndItsLeafKeepsSevenEighths) {
  const Result r = run("simulate --json --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, spine: 3, link: down}]'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  const json& item = j["stragglers"]["configured"][0];
  EXPECT_EQ(item["link"], "leaf0-spine3");
  EXPECT_EQ(item["link_down"], true);
  EXPECT_NEAR(item["leaf_uplink_share"].get<double>(), 7.0 / 8.0, 1e-12);
  EXPECT_NEAR(item["nic_uplink_GBps"].get<double>(), 50.0 * 7.0 / 8.0, 1e-9);
  // Less uplink for node 0's NICs cannot speed the step up.
  EXPECT_GE(j["step_time_s"].get<double>(), j["stragglers"]["baseline_step_s"].get<double>() * (1 - 1e-9));
  // The waits trace back to the GPUs the fault touches, those under leaf 0 (node 0: GPUs 0-7), not
  // to peers that joined late because of them (the list once named others only).
  const json& roots = j["stragglers"]["root_causes"];
  ASSERT_FALSE(roots.empty()) << j["stragglers"].dump();
  for (const json& root : roots) EXPECT_LT(root["gpu"].get<int64_t>(), 8) << j["stragglers"].dump();
  const Result text = run("simulate --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, spine: 3, link: down}]'");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("cable leaf0-spine3 down"), std::string::npos) << text.out;
}

TEST(TopologyCli, BadCableItemsAreOneLineErrors) {
  const auto expect_error = [](const Result& r, const std::string& piece) {
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find(piece), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_error(run("simulate --quiet --set 'scenario.stragglers=[{leaf: 0, spine: 0, link: down}]'"),
               "scenario.stragglers[0].leaf: a star has no leaf switches");
  expect_error(run("simulate --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 9, spine: 0, link: down}]'"),
               "scenario.stragglers[0].leaf: 9 is not a leaf");
  expect_error(run("simulate --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, spine: 8, link_GBps: 5}]'"),
               "scenario.stragglers[0].spine: 8 is not a spine");
  expect_error(run("simulate --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, link: down}]'"),
               "names both ends");
  expect_error(run("simulate --quiet" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, spine: 1, gpu: 3, link: down}]'"),
               "scenario.stragglers[0].gpu: a leaf-spine cable item");
}

}  // namespace
