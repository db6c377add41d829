// NVIDIA's published runs (../shared/reference/PUBLISHED-RUNS.md) against their shipped configs in
// workloads/published/, each simulated as it stands; the measured steps are typed in here from the
// reference file. docs/validation.md ("Table 2") has every row; these are the ones quick enough to
// replay in the suite, plus the two rows the nemo-24 profile's fits were solved on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_runner.hpp"

namespace stepsim {
namespace {

double predicted_step_s(const std::string& row) {
  const auto r = test::run_stepsim("simulate " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/" + row +
                                   ".yaml --json --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)["step_time_s"].get<double>();
}

// The nemo-24 profile's two named fits (workloads/software/nemo-24.yaml): gemm_efficiency solved on
// GK-H-007 (BF16), fp8_efficiency on GK-H-025 (FP8), so both hold within 1 % by construction; a
// change to the model that moves them must refit the profile.
TEST(PublishedRuns, TheNemo24FitsHoldOnTheirRows) {
  EXPECT_NEAR(predicted_step_s("GK-H-007"), 20.83, 0.01 * 20.83);
  EXPECT_NEAR(predicted_step_s("GK-H-025"), 16.69, 0.01 * 16.69);
}

// Predicted with those fits: the 8- to 32-GPU Grok-1 proxies (4,096 tokens, no pipeline), which
// share neither the fitted rows' GPU count nor their sequence length.
TEST(PublishedRuns, Nemo24GrokProxiesWithinTenPercent) {
  const std::pair<const char*, double> rows[] = {{"GK-H-001", 24.03}, {"GK-H-003", 10.64}, {"GK-H-019", 19.89},
                                                 {"GK-H-021", 8.30}};
  for (const auto& [row, measured_s] : rows) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.10 * measured_s) << row;
}

// Blackwell, predicted from published kernel benchmarks (workloads/hardware/b200.yaml) and profiles
// fitted on no Blackwell row: a Llama 3 8B FP8 run on 8 B200, a 70B FP8 FSDP run on 64 B200 (Together
// AI's cluster) and a Mixtral 8x7B FP8 run on 64 GB200.
TEST(PublishedRuns, BlackwellRowsWithinTenPercent) {
  const std::pair<const char*, double> rows[] = {{"L3-X-003", 4.28}, {"L3-X-018", 4.63}, {"MX-X-003", 0.85}};
  for (const auto& [row, measured_s] : rows) EXPECT_NEAR(predicted_step_s(row), measured_s, 0.10 * measured_s) << row;
}

}  // namespace
}  // namespace stepsim
