// NVIDIA's published runs (../shared/reference/PUBLISHED-RUNS.md) against their shipped configs in
// workloads/published/, each simulated as it stands; the measured steps are typed in here from the
// reference file. docs/validation.md ("Table 2") has every row; these are the ones quick enough to
// replay in the suite, plus the two rows the DGX Cloud H100 fits were solved on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim {
namespace {

double predicted_step_s(const std::string& row) {
  const auto r = test::run_stepsim("simulate " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/" + row +
                                   ".yaml --json --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)["step_time_s"].get<double>();
}

// The DGX Cloud H100 profile's named fit (workloads/hardware/dgx-cloud-h100.yaml): the BF16 GEMM share
// solved on GK-H-007 (NeMo 24.x), so it holds within 1 % by construction; a change to the model that
// moves it must refit the profile.
TEST(PublishedRuns, TheDgxCloudH100FitHoldsOnItsRow) {
  EXPECT_NEAR(predicted_step_s("GK-H-007"), 20.83, 0.01 * 20.83);
}

// The profile's FP8 share was a second fit, 0.5409 of the FP8 peak solved on GK-H-025, until the
// Megatron profiles' fp8_efficiency (0.776, solved on a GB200 MXFP8 row) predicted it: the h100-sxm
// preset's benchmarked 0.742 x 0.776 = 0.576, 6.5 % above the fit (8.2 % at 0.789, 2.1 % at 0.744, before the GB200
// preset's GEMM shares took its measured clock), and the fit's row, now a prediction, within 5 % of
// its 16.69 s (GEMM is about half of its step: -3.7 %).
TEST(PublishedRuns, TheFp8FactorPredictsTheDgxCloudFp8Share) {
  const std::string row = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/GK-H-025.yaml";
  const Plan p = load_plan(row, {});
  const double share = p.hardware.gemm_fp8_peak_share * p.software.low_precision_efficiency(LowPrecision::Fp8);
  EXPECT_NEAR(share, 0.5409, 0.10 * 0.5409);
  EXPECT_NEAR(predicted_step_s("GK-H-025"), 16.69, 0.05 * 16.69);
}

// What the fits never saw: the next release (NeMo 25.04, the nemo-25 profile) on the same clusters,
// the same Grok-1 plan with expert TP 1, BF16 (16.93 s, dgxc-benchmarking v25.05.01) and FP8 (13.433 s),
// each within the MoE issue's 15 % (without the fits: -16 % and -23 %).
TEST(PublishedRuns, TheNextReleaseOnTheSameClustersWithinFifteenPercent) {
  EXPECT_NEAR(predicted_step_s("GK-H-038"), 16.93, 0.15 * 16.93);
  EXPECT_NEAR(predicted_step_s("GK-H-039"), 13.433, 0.15 * 13.433);
}

// The megatron-bridge profile's named fit (workloads/software/megatron-bridge.yaml): fp8_efficiency
// (MXFP8's too) solved on L3-X-036 (Llama 3 70B, MXFP8, 64 GB200, 8.828 s), so it holds within 1 % by construction.
TEST(PublishedRuns, TheMegatronBridgeMxfp8FitHoldsOnItsRow) {
  EXPECT_NEAR(predicted_step_s("L3-X-036"), 8.828, 0.01 * 8.828);
}

// The megatron-bridge profile's second named fit: moe_layer_host_s (the MoE block's framework work
// on the host that launches no kernel) solved on QW-H-002 (Qwen3-30B-A3B, FP8 current scaling, 16
// H100, 29.257 s), so it holds within 1 % by construction.
TEST(PublishedRuns, TheMegatronBridgeMoeHostFitHoldsOnItsRow) {
  EXPECT_NEAR(predicted_step_s("QW-H-002"), 29.257, 0.01 * 29.257);
}

// What that fit never saw, each within the MoE issue's 15 %: the same model on 8 B200 in MXFP8 at
// micro-batch 1 (alltoall dispatcher, 27.05 s) and 4 (HybridEP, 9.66 s), where the GPU hides more of
// the host's time, and the 235B model on 256 H100 (TP 2, PP 8 x VP 4, EP 32 over four nodes, the
// alltoall dispatcher with its expert-parallel overlap, 76.561 s).
TEST(PublishedRuns, QwenMoeRowsTheHostFitNeverSawWithinFifteenPercent) {
  const std::pair<const char*, double> rows[] = {{"QW-X-005", 27.05}, {"QW-X-001", 9.66}, {"QW-H-003", 76.561}};
  for (const auto& [row, measured_s] : rows) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.15 * measured_s) << row;
}

// What the fit never saw: NeMo 25.11 published the same Llama 3 8B plan on 8 B200 in per-tensor FP8
// (30,624 tokens/s/GPU) and MXFP8 (29,521), so MXFP8's step is 30624 / 29521 = 1.037 times the
// per-tensor one. Before the fit the presets' bare-GEMM shares made MXFP8 20 % faster instead; the
// predicted ratio must be within 4 % of the measured one.
TEST(PublishedRuns, Mxfp8AgainstPerTensorFp8AsTheReleaseMeasuredIt) {
  const auto r = test::run_stepsim("simulate " + std::string(STEPSIM_SOURCE_DIR) +
                                   "/workloads/published/L3-X-003.yaml --set train.precision=mxfp8 --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const double mxfp8_s = nlohmann::json::parse(r.out)["step_time_s"].get<double>();
  EXPECT_NEAR(mxfp8_s / predicted_step_s("L3-X-003"), 30624.0 / 29521.0, 0.04);
}

// torchtitan's December 2024 H100 benchmark (benchmarks/llama3_h100_202412_torchtitan.md, Table 1:
// Llama 3.1 8B, FSDP on 8 GPUs) measured the same plan eager (5,762 tokens/s/GPU: 2.8435 s) and with
// torch.compile (6,667: 2.4575 s), a 0.386 s gap. stepsim's two torchtitan profiles differ in what
// compile fuses (the norms, RoPE and SwiGLU as eager composite ops, the cross-entropy, the casts);
// nothing was fitted to the gap, which must come out within 25 % of the measured one (it was 0.041 s,
// 89 % short, before the eager ops were counted).
TEST(PublishedRuns, TorchtitanEagerAgainstCompileAsTheBenchmarkMeasuredIt) {
  const double gap_s = predicted_step_s("checks/TT-H100-8B-8-FSDP") - predicted_step_s("checks/TT-H100-8B-8-FSDP-COMPILE");
  EXPECT_NEAR(gap_s, 2.8435 - 2.4575, 0.25 * (2.8435 - 2.4575));
}

// Predicted with those fits: the 8- to 32-GPU Grok-1 proxies (4,096 tokens, no pipeline), which
// share neither the fitted rows' GPU count nor their sequence length.
TEST(PublishedRuns, Nemo24GrokProxiesWithinTenPercent) {
  const std::pair<const char*, double> rows[] = {{"GK-H-001", 24.03}, {"GK-H-003", 10.64}, {"GK-H-019", 19.89},
                                                 {"GK-H-021", 8.30}};
  for (const auto& [row, measured_s] : rows) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.10 * measured_s) << row;
}

// Blackwell, predicted from published kernel benchmarks (workloads/hardware/b200.yaml) and the
// profiles' one FP8 factor (fitted on L3-X-036, a 70B MXFP8 GB200 row, never on these): a Llama 3 8B
// FP8 run on 8 B200, the 405B FP8 run on 128 B200 (Megatron-Bridge 25.11, TP 4, PP 8, CP 2) and a
// Mixtral 8x7B FP8 run on 64 GB200. (Together AI's 70B FSDP run on 64 B200, L3-X-018, was the second
// until GB200's measured clock re-solved the factor: -5.3 % -> -10.2 %, docs/validation.md.)
TEST(PublishedRuns, BlackwellRowsWithinTenPercent) {
  const std::pair<const char*, double> rows[] = {{"L3-X-003", 4.28}, {"L3-X-004", 6.197}, {"MX-X-003", 0.85}};
  for (const auto& [row, measured_s] : rows) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.10 * measured_s) << row;
}

// Blackwell Ultra (workloads/hardware/b300.yaml, gb300.yaml). GB300's one named fit, its FP8, MXFP8
// and NVFP4 GEMM shares x 1.431, is solved on L3-X-075 (Llama 3 70B MXFP8 on 64 GB300, 6.737 s) and
// holds within 1 % there; the rows it never saw are predictions: the 70B FP8 run with FSDP and the
// 70B NVFP4 run of the same release (6.244 / 4.491 s), the 8B on 8 GB300 (3.49 s), all within 10 %,
// and the B300 rows, which no fit touches (Qwen3-235B on 256 B300, 22.081 s, and Qwen3-30B on 8 B300
// under the full-iteration graph, 6.43 s), within the MoE issue's 15 %.
TEST(PublishedRuns, TheGb300FitHoldsOnItsRow) {
  EXPECT_NEAR(predicted_step_s("L3-X-075"), 6.737, 0.01 * 6.737);
}
TEST(PublishedRuns, BlackwellUltraRowsTheFitNeverSaw) {
  const std::pair<const char*, double> dense[] = {{"L3-X-074", 6.244}, {"L3-X-076", 4.491}, {"L3-X-098", 3.49}};
  for (const auto& [row, measured_s] : dense) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.10 * measured_s) << row;
  const std::pair<const char*, double> moe[] = {{"QW-X-032", 22.081}, {"QW-X-030", 6.43}};
  for (const auto& [row, measured_s] : moe) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.15 * measured_s) << row;
}

// NVIDIA ran its GB200 FSDP recipes, so they fit in the GPU's 186 GiB; they do with the activations
// their recipes offload to the Grace CPU (parallel.cpu_offload_layers: 40 of the 70B's 80 layers, 92
// and 95 of the 405B's 126), and would not without (the static estimate, which the replay's peak
// equals: tests/memory/activation_offload_test.cpp).
TEST(PublishedRuns, GB200FsdpRecipesFitWithTheActivationsTheyOffload) {
  const auto fits = [](const std::string& row, const std::string& sets) {
    const auto r = test::run_stepsim("roofline " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/" + row +
                                     ".yaml --json" + sets);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["memory"]["fits"].get<bool>();
  };
  for (const char* row : {"L3-X-035", "L3-X-063", "L3-X-064", "L3-X-070"}) {
    EXPECT_TRUE(fits(row, "")) << row;
    EXPECT_FALSE(fits(row, " --set parallel.cpu_offload_layers=0")) << row;
  }
}

// `stepsim search` against a published recipe (issue 32): with the model, GPUs and batch of L3-X-003
// (Llama 3 8B on 8 B200, 128 x 8192 tokens) fixed, the search's best plan must be predicted at least
// as fast as NVIDIA's own plan, and that plan must be among the replayed candidates, within 10 % of
// the best.
TEST(PublishedRuns, SearchBeatsOrMatchesThePublishedPlanWithinTenPercent) {
  const test::ScratchDir dir;
  const auto r = test::run_stepsim("search " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-003.yaml -o " +
                                   dir.file("search") + " -j 2 --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch own, best;
  ASSERT_TRUE(std::regex_search(r.out, own, std::regex("config's own plan: ([0-9.]+) s replayed"))) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, best, std::regex("best plan: [^\n]*: ([0-9.]+) s,"))) << r.out;
  const double own_s = std::stod(own[1]), best_s = std::stod(best[1]);
  EXPECT_LE(best_s, own_s);
  EXPECT_LE(own_s, 1.10 * best_s);
}

}  // namespace
}  // namespace stepsim
