// Switching the software profile changes only what the profile owns: two `simulate --json` runs of
// one plan under two releases that differ in their per-kernel cost alone (megatron-core-r0.8's
// 44.8 us, deepseek-v3's 6.142 us; neither has a host cost, a CUDA graph or a fused kernel; their
// pipeline splits, Megatron-Core's even one and stepsim's balance, and their Megatron FLOP counts,
// r0.8's and v0.12's, are pinned to the same) agree
// on every figure but the software object and the times the launches move; the launch seconds
// scale by exactly 6.142 / 44.8. Every report names the release.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "simulator/report/roofline_report.hpp"
#include "tests/cli_runner.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

json simulate(const std::string& sets) {
  const auto r = test::run_stepsim("simulate " + kLlama + " --json --quiet " + sets);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(SoftwareProfileCli, SwitchingTheReleaseChangesOnlyWhatItOwns) {
  const json a = simulate("--set software.profile=megatron-core-r0.8");
  const json b = simulate("--set software.profile=deepseek-v3 --set software.pipeline_split=megatron "
                          "--set software.megatron_flops=r0.8");
  // What the profile owns: its own object, the launch time and what it moves.
  EXPECT_EQ(a["software"]["profile"], "megatron-core-r0.8");
  EXPECT_EQ(b["software"]["profile"], "deepseek-v3");
  EXPECT_NE(a["step_time_s"], b["step_time_s"]);
  // What it does not: the plan, the roofline (speed of light knows no software), the memory
  // timeline, every class of the cost model but launches.
  EXPECT_EQ(a["roofline"], b["roofline"]);
  // (when the peak happens moves with the times; its bytes do not)
  json ma = a["memory"], mb = b["memory"];
  ma.erase("peak_t_s"), mb.erase("peak_t_s");
  EXPECT_EQ(ma, mb);
  EXPECT_EQ(a["sim"]["activities"], b["sim"]["activities"]);
  const json& ka = a["compute_breakdown"]["per_microbatch"];
  const json& kb = b["compute_breakdown"]["per_microbatch"];
  ASSERT_EQ(ka.size(), kb.size());
  for (size_t i = 0; i < ka.size(); ++i) {
    for (const char* cls : {"gemm_s", "attention_s", "memory_bound_s"}) EXPECT_EQ(ka[i][cls], kb[i][cls]) << cls;
    EXPECT_NEAR(kb[i]["launch_s"].get<double>(), ka[i]["launch_s"].get<double>() * 6.142 / 44.8,
                1e-12 * ka[i]["launch_s"].get<double>());
  }
  // The diff, key by key at the top: only these differ.
  for (const auto& [key, value] : a.items()) {
    const bool owned = key == "software" || key == "step_time_s" || key == "compute_s" || key == "bubble_s" ||
                       key == "exposed_comm_s" || key == "exposed_comm_share" || key == "bubble_share_of_compute" ||
                       key == "tokens_per_s_per_gpu" || key == "vs_roofline" || key == "mfu" ||
                       key == "achieved_tflops_per_gpu" || key == "megatron_tflops_per_gpu" || key == "ranks" ||
                       key == "stats" || key == "compute_breakdown" || key == "explanation" || key == "exposed_by_kind" ||
                       key == "sim" || key == "sets" || key == "critical_rank" || key == "memory" ||
                       key == "pp_comm_s" || key == "stragglers" ||  // memory: above; these two: waits, in seconds
                       key == "notes";  // the --sets that pin b's split and count say they override the profile
    if (!owned) EXPECT_EQ(value, b[key]) << key;
  }
}

TEST(SoftwareProfileCli, TheTextReportNamesTheRelease) {
  const auto r = test::run_stepsim("simulate " + kLlama + " --quiet --set software.profile=nemo-25");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("software: NeMo 25"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("software.profile nemo-25"), std::string::npos);
  // Its cuDNN release (nemo-25: 91002), and on a B200 the attention curve that release runs.
  EXPECT_NE(r.out.find("cuDNN 9.10.2 (software.cudnn_version)"), std::string::npos) << r.out;
  const auto b200 = test::run_stepsim("simulate " + kLlama + " --quiet --set software.profile=nemo-25 --set hardware.preset=b200");
  EXPECT_EQ(b200.code, 0) << b200.err;
  EXPECT_NE(b200.out.find("attention in cuDNN 9.10.2 at 1753 / 1433 TFLOP/s"), std::string::npos) << b200.out;
  EXPECT_NE(b200.out.find("older than the preset's cuDNN 9.22.0 curve, 1670 / 1331"), std::string::npos) << b200.out;
}

// The MoE block's framework host time is stated with its per-call rate and the block's calls:
// megatron-bridge's fit (2.984 ms over the flex dispatcher's 38 calls: 78.54 us) and, for the
// Qwen3-235B H100 recipe's alltoall dispatcher, 41 forward and 28 backward (the audit's count).
TEST(SoftwareProfileCli, TheReportStatesTheMoeBlocksCallsAndTheirRate) {
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-H-003.yaml", {});
  const std::string text = software_text(p);
  EXPECT_NE(text.find("78.5368 us per Python-level call"), std::string::npos) << text;
  EXPECT_NE(text.find("41 calls a layer forward and 28 backward"), std::string::npos) << text;
  // No such clause for a dense model or a profile without the fit.
  EXPECT_EQ(software_text(load_plan(kLlama, {})).find("Python-level call"), std::string::npos);
}

}  // namespace
}  // namespace stepsim
