// Megatron-LM's own FLOP count of a step (megatron/training/training.py num_floating_point_operations
// at core_r0.8.0, and at core_v0.12.0 for MLA and under software.megatron_flops v0.12), which its
// published TFLOP/s per GPU use: against the formula written out here and a published step.
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {
namespace {

TEST(MegatronFlops, GptOfTheWeakScalingTable) {
  // 177B row: MHA (query groups = heads, kv_channels x heads = hidden), GELU MLP of 4 h, vocab 131072:
  // 12 B s L h^2 (6 + s/h + V / (2 L h)).
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/megatron/gpt-177b.yaml");
  const double b = 1152, s = 4096, l = 96, h = 12288, v = 131072;
  const double expected = 12 * b * s * l * h * h * (6 + s / h + v / (2 * l * h));
  EXPECT_NEAR(megatron_flops(p), expected, 1e-12 * expected);
  // It counts the attention scores over all S^2, twice the causal core stepsim's MFU uses
  // (forward 2 matmuls x 2 x S^2/2 x h, x 3 with the backward), and leaves out the LayerNorms'
  // weights that stepsim's 6ND counts (4 h per layer and the final 2 h, 6 FLOPs per token each).
  const Roofline r = compute_roofline(p);
  const double causal_core = 3 * 2 * s * s * h * l * b, norms = 6 * (4 * h * l + 2 * h) * b * s;
  EXPECT_NEAR(megatron_flops(p) - r.terms.model_flops, causal_core - norms, 1e-9 * causal_core);
}

TEST(MegatronFlops, GroupedQueryAttentionAndSwiGlu) {
  // Llama 3.1 8B: 32 heads, 8 query groups, d 128 (q projection = hidden), SwiGLU 14336 (3/2).
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml");
  const double b = 512, s = 8192, l = 32, h = 4096, v = 128256;
  const double per_layer = (1 + 8.0 / 32 + s / h) * 1.0 + 14336 / h * 1.5;
  const double expected = 12 * b * s * l * h * h * (per_layer + v / (2 * l * h));
  EXPECT_NEAR(megatron_flops(p), expected, 1e-12 * expected);
}

TEST(MegatronFlops, MlaAsMegatronCoreV012CountsIt) {
  // DeepSeek-V3 (FACTS 1): h 7168, 128 heads, q_lora 1536, kv_lora 512, qk 128 + rope 64, v 128;
  // 3 dense layers of 18432, 58 MoE layers of 8 x 2048 routed + 1 x 2048 shared, SwiGLU; vocab
  // 129280. The default plan: 15360 sequences of 4096 tokens.
  const double b = 15360, s = 4096, h = 7168, a = 128;
  const double q = 1536 * (h + a * (128 + 64) + 1);
  const double kv = 512 * (h + a * (128 + 128) + 1);
  const double attention = 6 * (q + kv + h * 64 + a * 128 * h) + 6 * s * (a * 192 / 2 + a * 128 / 2);
  const double dense = 12 * h * 18432 * 1.5, moe = 12 * h * (8 * 2048 + 2048) * 1.5;
  const double expected = b * s * (61 * attention + 3 * dense + 58 * moe + 6 * h * 129280);
  EXPECT_NEAR(megatron_flops(load_plan(default_config_path())), expected, 1e-12 * expected);
}

TEST(MegatronFlops, CausalScoresSinceMegatronCoreV012) {
  // Megatron-Core 0.12 on counts half the attention scores (the causal half). Qwen3-235B-A22B: h 4096,
  // 94 layers, 64 heads of 128 over 4 query groups, 128 experts of 1536, top 8, SwiGLU, vocab
  // 151936; 2048 sequences of 4096 tokens.
  Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-H-003.yaml");
  p.train.global_batch = 2048;
  p.software.megatron_flops = MegatronFlops::V012;
  const double b = 2048, s = 4096, h = 4096, l = 94, v = 151936;
  const double q_ratio = 64.0 * 128 / h;
  const double attention = 12 * h * h * (1 + 4.0 / 64 + s / h / 2) * q_ratio;
  const double moe = 12 * h * 8 * 1536 * 1.5;
  const double expected = b * s * (l * (attention + moe) + 6 * h * v);
  EXPECT_NEAR(megatron_flops(p), expected, 1e-12 * expected);
  // Against the step: the Megatron-MoE-ModelZoo's four Qwen3-235B rows on 256 H100
  // (best_practice/Qwen3/readme.md at c1ad0b5c: 2048 x 4096 tokens a step, step time and TFLOP/s per
  // GPU both printed, 3 digits each) imply 1.2356 / 1.2436 / 1.2390 / 1.2398 e18 FLOPs a step; their
  // mean, within the printed digits' 0.5 %.
  const double published = (245 * 19.7 + 276 * 17.6 + 200 * 24.2 + 167 * 29.0) / 4 * 256 * 1e12;
  EXPECT_NEAR(megatron_flops(p) / published, 1.0, 0.005);
  // r0.8's count of the same step holds the other half of the scores: 6 b s^2 x heads x d x layers.
  p.software.megatron_flops = MegatronFlops::R08;
  EXPECT_NEAR(megatron_flops(p) - expected, 6 * b * s * s * 64 * 128 * l, 1e-9 * expected);
}

}  // namespace
}  // namespace stepsim
