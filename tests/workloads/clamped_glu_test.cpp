// GPT-OSS's clamped activation and expert biases as Megatron-Core runs them unfused
// (software.fused.clamped_glu / expert_bias false, the Megatron profiles): checked against the
// counts read from its source (workloads/layers/layer_memory.hpp: the clamps and cat before the
// activation kernel, 16 bytes per FFN value in 4 kernels forward, 30 in 9 backward; the second bias
// per local expert, 12 bytes per hidden value of a routed row in 2 kernels per expert and a cat
// forward, 16 in 4 per expert and 2 backward), on the shipped GPT-OSS 120B check (EP 8: 16 local
// experts).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/host_bound_parts.hpp"

namespace stepsim {
namespace {

constexpr double kFfn = 2880, kHidden = 2880, kLocalExperts = 128 / 8;

const std::string kGptOss = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/GPTOSS-B200-64-BF16.yaml";

using namespace host_bound;

// The check's plan (megatron-bridge: both unfused), every MLP part host-bound.
Plan plan(bool fused) {
  const std::string on = fused ? "true" : "false";
  std::vector<std::string> s = sets();
  s.insert(s.end(), {"software.fused.clamped_glu=" + on, "software.fused.expert_bias=" + on});
  return load_plan(kGptOss, s);
}

PartTime part_time(const Plan& p, LayerPart part) { return host_bound::part_time(p, part, 1); }

double routed_rows(const Plan& p) { return cost::mean_microbatch_shape(p).routed_rows; }

TEST(ClampedGlu, TheModelCardSaysGptOssClampsAndBiasesItsExperts) {
  const Plan p = plan(false);
  EXPECT_DOUBLE_EQ(p.model.swiglu_limit, 7.0);  // config.json's swiglu_limit
  EXPECT_TRUE(p.model.mlp_bias);                // HF's GptOssExperts: no key, always biased
  EXPECT_FALSE(load_plan(default_config_path(), {}).model.mlp_bias);
  EXPECT_DOUBLE_EQ(load_plan(default_config_path(), {}).model.swiglu_limit, 0.0);
}

TEST(ClampedGlu, TheForwardPaysTheClampsAndEachLocalExpertsBiasAdd) {
  const Plan eager = plan(false), fused = plan(true);
  ASSERT_DOUBLE_EQ(cost::mean_microbatch_shape(eager).experts_per_gpu, kLocalExperts);
  const PartTime a = part_time(eager, LayerPart::MlpF), b = part_time(fused, LayerPart::MlpF);
  // Kernels: 4 for the clamps, 2 per local expert and a cat for the bias.
  EXPECT_NEAR(a.kernels_s - b.kernels_s, (4 + 2 * kLocalExperts + 1) * kHost, 1e-9);
  // Bytes per routed row: 16 per FFN value, 12 per hidden value.
  EXPECT_NEAR(a.memory_s - b.memory_s, (16 * kFfn + 12 * kHidden) * routed_rows(eager) / hbm_bytes_per_s(eager),
              1e-12);
}

TEST(ClampedGlu, TheBackwardPaysAutogradsClampGradientsTheBiasGradientsAndTheRecomputedClamps) {
  const Plan eager = plan(false), fused = plan(true);
  ASSERT_TRUE(eager.parallel.recompute.has(Recompute::MoeAct));  // the recipe recomputes moe_act
  const PartTime a = part_time(eager, LayerPart::MlpB), b = part_time(fused, LayerPart::MlpB);
  // 9 for the clamps' gradients, 4 per local expert and the two splits' cats for the bias's, 4 for
  // the recomputed clamps.
  EXPECT_NEAR(a.kernels_s - b.kernels_s, (9 + 4 * kLocalExperts + 2 + 4) * kHost, 1e-9);
  EXPECT_NEAR(a.memory_s - b.memory_s,
              ((30 + 16) * kFfn + 16 * kHidden) * routed_rows(eager) / hbm_bytes_per_s(eager), 1e-12);
}

TEST(ClampedGlu, ExpertsWithoutGroupedGemmsAddTheirBiasInTheirLinears) {
  // Megatron-Core's SequentialMLP: each expert an MLP whose linear adds the bias; the clamps stay,
  // once per expert (4 kernels each).
  const auto with = [](bool fused) {
    const std::string on = fused ? "true" : "false";
    std::vector<std::string> s = sets();
    s.insert(s.end(), {"parallel.moe_grouped_gemm=false", "software.fused.clamped_glu=" + on, "software.fused.expert_bias=" + on});
    return load_plan(kGptOss, s);
  };
  const Plan eager = with(false), fused = with(true);
  const PartTime a = part_time(eager, LayerPart::MlpF), b = part_time(fused, LayerPart::MlpF);
  EXPECT_NEAR(a.kernels_s - b.kernels_s, 4 * kLocalExperts * kHost, 1e-9);
  EXPECT_NEAR(a.memory_s - b.memory_s, 16 * kFfn * routed_rows(eager) / hbm_bytes_per_s(eager), 1e-12);
}

TEST(ClampedGlu, AModelWithoutTheClampOrBiasesPaysNothingForTheKeys) {
  // DeepSeek-V3 (no swiglu_limit, no MLP biases): the keys change nothing.
  const auto seconds = [](const std::string& on) {
    const Plan p = load_plan(default_config_path(), {"software.fused.clamped_glu=" + on, "software.fused.expert_bias=" + on});
    const cost::MicrobatchShape shape = cost::mean_microbatch_shape(p);
    const LayerWork w = layer_work(p, 5, p.sequences_per_microbatch(), shape.routed_rows);
    return cost::part_seconds(p, w.part(LayerPart::MlpF), shape).all().total();
  };
  EXPECT_DOUBLE_EQ(seconds("true"), seconds("false"));
}

TEST(ClampedGlu, AClampNeedsAGatedActivationAndANonNegativeNumber) {
  const auto message = [](const std::vector<std::string>& sets) {
    try {
      load_plan(default_config_path(), sets);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({"model.hidden_act=gelu", "model.swiglu_limit=7"}).find("model.swiglu_limit"), std::string::npos);
  EXPECT_NE(message({"model.swiglu_limit=-1"}).find("model.swiglu_limit"), std::string::npos);
  EXPECT_NE(message({"model.swiglu_limit=1e400"}).find("model.swiglu_limit"), std::string::npos);
  EXPECT_NE(message({"software.fused.clamped_glu=2"}).find("software.fused.clamped_glu"), std::string::npos);
  EXPECT_EQ(message({"model.swiglu_limit=7"}), "");  // DeepSeek's SwiGLU is gated
}

}  // namespace
}  // namespace stepsim
