// Across the shipped configs, the schedules, the GPU presets, the topologies and the scenarios:
// every time `simulate --json` reports is non-negative (a script asserting `>= 0` must never trip
// on a rounding residue such as a bubble of -5e-18 s), and each rank's step splits into compute,
// exposed communication and bubble within kSplitTolerance of the step (sim_result.hpp). The plans
// are shrunk where they would take long (fewer layers, fewer nodes); each group is its own test so
// ctest runs them side by side.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulator/engine/sim_result.hpp"
#include "tests/cli_runner.hpp"

namespace stepsim::test {
namespace {

using nlohmann::json;

// Fields that are differences, so either sign is a result: the step against the roofline, and a
// straggler's effect on the step (jitter can make a step shorter).
bool signed_field(const std::string& path) {
  return path == "/vs_roofline" || path.ends_with("/step_impact_s") || path.find("/delta") != std::string::npos;
}

void expect_no_negative(const json& j, const std::string& path, const std::string& plan) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) expect_no_negative(v, path + "/" + k, plan);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) expect_no_negative(j[i], path + "/" + std::to_string(i), plan);
  } else if (j.is_number() && !signed_field(path)) {
    EXPECT_GE(j.get<double>(), 0.0) << path << " in simulate --json " << plan;
  }
}

void check_plan(const std::string& args) {
  SCOPED_TRACE(args);
  const CliResult r = run_stepsim("simulate --json --quiet " + args);
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  expect_no_negative(j, "", args);
  const double step = j.at("step_time_s").get<double>();
  ASSERT_GT(step, 0);
  const double tolerance = kSplitTolerance * step;
  for (const json& rank : j.at("ranks")) {
    const double parts = rank.at("compute_s").get<double>() + rank.at("exposed_comm_s").get<double>() +
                         rank.at("bubble_s").get<double>();
    EXPECT_NEAR(parts, rank.at("step_time_s").get<double>(), tolerance) << "rank " << rank.at("rank");
  }
  // The mean rank and the critical rank's breakdown split the same step.
  EXPECT_NEAR(j.at("compute_s").get<double>() + j.at("exposed_comm_s").get<double>() + j.at("bubble_s").get<double>(),
              step, tolerance);
  const json& crit = j.at("compute_breakdown").at("step");
  EXPECT_NEAR(crit.at("simulated_compute_s").get<double>() + crit.at("exposed_comm_s").get<double>() +
                  crit.at("bubble_s").get<double>(),
              step, tolerance);
}

// A small MoE: Mixtral 8x7B's layers (8 experts, top 2) on the Llama 3.1 8B plan, 8 layers deep.
const std::string kSmallMoe =
    "workloads/llama-3.1-8b.yaml --set model.config_json=workloads/models/mixtral-8x7b.config.json "
    "--set model.num_hidden_layers=8 --set parallel.ep=8 --set cluster.nodes=4 --set train.global_batch=64 "
    "--set parallel.microbatches=8";

TEST(TimeSplitSweep, ShippedConfigs) {
  for (const char* config :
       {"", "workloads/deepseek-v3-from-hf.yaml", "workloads/deepseek-profile-capture.yaml",
        "workloads/llama-3.1-8b.yaml", "workloads/llama-3.1-405b.yaml --set model.num_hidden_layers=32",
        "workloads/megatron/gpt-1.7b.yaml", "workloads/megatron/gpt-7.1b.yaml", "workloads/megatron/gpt-16b.yaml",
        "workloads/megatron/gpt-32b.yaml --set model.num_hidden_layers=16",
        "workloads/megatron/gpt-70b.yaml --set model.num_hidden_layers=16",
        "workloads/megatron/gpt-119b.yaml --set model.num_hidden_layers=16",
        "workloads/megatron/gpt-177b.yaml --set model.num_hidden_layers=16",
        "workloads/megatron/gpt-314b.yaml --set model.num_hidden_layers=16",
        "workloads/megatron/gpt-462b.yaml --set model.num_hidden_layers=16"})
    check_plan(config);
}

TEST(TimeSplitSweep, SchedulesOnASmallMoe) {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe", "dualpipev"})
    check_plan(kSmallMoe + " --set schedule=" + schedule);
  // FSDP: 32 replicas of 2 sequences; HSDP: ZeRO-3 sharded over 8 of the 32 GPUs, replicated 4 times.
  const std::string fsdp = kSmallMoe + " --set schedule=fsdp --set parallel.microbatches=2";
  check_plan(fsdp);
  check_plan(fsdp + " --set parallel.fsdp_shard_size=8");
}

TEST(TimeSplitSweep, Presets) {
  for (const char* preset : {"h800", "h100-sxm", "h200", "b200", "gb200", "b300", "gb300", "mi300x"}) {
    check_plan(std::string("workloads/megatron/gpt-1.7b.yaml --set hardware.preset=") + preset);
    check_plan(kSmallMoe + " --set hardware.preset=" + preset);
  }
}

TEST(TimeSplitSweep, TopologiesAndScenarios) {
  check_plan(kSmallMoe + " --set cluster.topology=fat-tree --set cluster.leaf_nics=16 --set cluster.oversubscription=2");
  check_plan(kSmallMoe + " --set cluster.topology=multi-plane");
  check_plan(kSmallMoe + " --set 'scenario.stragglers=[{gpu: 3, nic: down}]' --set sim.mode=full");
  check_plan(kSmallMoe + " --set 'scenario.stragglers=[{gpu: 5, clock: 0.8}]' --set scenario.jitter_sigma=0.1");
  check_plan(kSmallMoe + " --set scenario.routing=zipf --set scenario.zipf_s=1.2");
  check_plan(kSmallMoe + " --set sim.compute=speed-of-light --set parallel.recompute=full");
}

}  // namespace
}  // namespace stepsim::test
