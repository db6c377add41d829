// `stepsim simulate` with uneven routing, end to end: the routing report, byte-for-byte seeds and
// one-line errors for bad routing input.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

namespace {

using Result = stepsim::test::CliResult;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

// The 8-layer DeepSeek-V3 on 4 nodes of tests/simulator/routing_step_test.cpp.
const std::string kSmall =
    " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
    " --set train.global_batch=64 --set parallel.microbatches=4";

// The replay's wall time is the one field two identical runs may differ in.
std::string without_wall_time(const std::string& json) {
  return std::regex_replace(json, std::regex("\"wall_s\": [^,\\n]*"), "\"wall_s\": X");
}

TEST(RoutingCli, SameSeedIsByteIdenticalAndAnotherSeedDrawsDifferently) {
  const std::string args = "simulate --json --quiet" + kSmall + " --set scenario.routing=zipf --set scenario.seed=";
  const Result a = run(args + "5"), b = run(args + "5"), c = run(args + "6");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(without_wall_time(a.out), without_wall_time(b.out));
  const auto ja = nlohmann::json::parse(a.out), jc = nlohmann::json::parse(c.out);
  EXPECT_NE(ja["routing"]["layers"].dump(), jc["routing"]["layers"].dump());
  EXPECT_NE(ja["step_time_s"].get<double>(), jc["step_time_s"].get<double>());
}

TEST(RoutingCli, ReportsLoadsSlowdownAndWhoWasWaitedFor) {
  // One hot expert with 40 % of the rows, the same one in every layer: its GPU is the one every
  // other GPU of the group waits for, by the load table and by the simulated compute time alike.
  const Result r = run("simulate --json --quiet" + kSmall +
                       " --set scenario.routing=hot --set scenario.hot_share=0.4 --set scenario.layer_correlation=1");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["routing"];
  EXPECT_EQ(j["model"], "hot");
  ASSERT_EQ(j["layers"].size(), 5u);
  // Closed form: 0.4 of the rows on one of 256 experts = 102.4 x the mean (noise < 0.5 %).
  EXPECT_NEAR(j["expert_max_over_mean"]["mean_over_layers"].get<double>(), 0.4 * 256, 0.005 * 0.4 * 256);
  // Its GPU holds 16 experts: 0.4 + 15 x 0.6 / 255 of the rows, x 16 against the mean.
  const double gpu = (0.4 + 15 * 0.6 / 255) * 16;
  EXPECT_NEAR(j["gpu_max_over_mean"]["worst"].get<double>(), gpu, 0.005 * gpu);
  EXPECT_GT(j["slowdown"].get<double>(), 0.05);
  EXPECT_LT(j["mean_load_step_s"].get<double>(), nlohmann::json::parse(r.out)["step_time_s"].get<double>());
  ASSERT_EQ(j["waited_for"].size(), 2u);
  for (const auto& w : j["waited_for"]) {
    EXPECT_DOUBLE_EQ(w["share_of_all_to_alls"].get<double>(), 1.0);
    EXPECT_EQ(w["gpu"], w["most_compute_gpu"]);
  }
}

TEST(RoutingCli, BalancedRoutingReportsNoSlowdown) {
  const Result r = run("simulate --json --quiet" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["routing"];
  EXPECT_EQ(j["model"], "balanced");
  EXPECT_DOUBLE_EQ(j["slowdown"].get<double>(), 0.0);
  EXPECT_NEAR(j["gpu_max_over_mean"]["worst"].get<double>(), 1.0, 1e-12);
}

void expect_one_line_error(const std::string& sets, const std::vector<std::string>& names) {
  const Result r = run("simulate --quiet" + kSmall + " " + sets);
  EXPECT_EQ(r.code, 2) << sets << "\n" << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const auto& n : names) EXPECT_NE(r.err.find(n), std::string::npos) << sets << ": " << r.err;
}

TEST(RoutingCli, BadRoutingInputIsOneLineAndExitTwo) {
  expect_one_line_error("--set scenario.routing=uniform", {"scenario.routing", "uniform", "zipf"});
  expect_one_line_error("--set scenario.routing=zipf --set scenario.zipf_s=-1", {"scenario.zipf_s", "negative"});
  expect_one_line_error("--set scenario.routing=dirichlet --set scenario.dirichlet_alpha=0",
                        {"scenario.dirichlet_alpha"});
  expect_one_line_error("--set scenario.routing=hot --set scenario.hot_share=1.5", {"scenario.hot_share"});
  expect_one_line_error("--set scenario.routing=file", {"scenario.load_file"});
  expect_one_line_error("--set scenario.routing=file --set scenario.load_file=/nonexistent/loads.csv",
                        {"/nonexistent/loads.csv", "scenario.load_file"});
  const std::string garbled = stepsim::test::process_scratch().file("garbled_loads.csv");
  std::ofstream(garbled) << "layer,expert,tokens\n3,0,lots\n";
  expect_one_line_error("--set scenario.routing=file --set scenario.load_file=" + garbled,
                        {garbled, "scenario.load_file", "line 2"});
}

}  // namespace
