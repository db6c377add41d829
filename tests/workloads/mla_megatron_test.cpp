// MLA as Megatron-Core's MLASelfAttention runs it with Transformer Engine (software.fused.mla_down_proj
// and mla_qkv false, the Megatron profiles), checked against the counts of docs/megatron-mla-audit.md
// on the shipped DeepSeek-V3 check on 1024 H100 (TP 2, FP8 current scaling, mla_up_proj recompute):
// the two down projections each cast the norm's output, the up projections cast their latents, the
// fused MLA RoPE kernels write whole keys and values, every projection's output gradient is cast,
// linear_proj casts its saved BF16 input again, and the recompute copies query, key and value back.
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

// DeepSeek-V3's config.json.
constexpr double kHidden = 7168, kHeads = 128, kNope = 128, kRope = 64, kV = 128, kQLatent = 1536, kKvLatent = 512;
constexpr double kQk = kNope + kRope, kAttnOut = kHeads * kV;
// Bytes per value on H100 under current scaling (Transformer Engine 2.7): a cast reads BF16 (2) after
// an amax pass (2 more) and writes two FP8 copies (1 + 1): the row-wise one its forward or dgrad GEMM
// reads and the transpose the wgrad reads (Hopper takes FP8 operands only as A x B^T), both from
// Transformer Engine's cast_transpose, for an activation as for a gradient. A norm-fed cast skips the
// amax pass (the norm took it). Kernels: the amax's zeroing, the amax, the scale, the cast.
constexpr double kCast = 2 + 2 + 1 + 1, kNormFedCast = 2 + 1 + 1, kGradCast = kCast;
constexpr int kCastKernels = 4, kNormFedCastKernels = 3, kGradCastKernels = kCastKernels;

const std::string kDsv3 = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/DSV3-H100-1024-FP8.yaml";

using namespace host_bound;

// The check's plan (megatron-bridge: both apart), every attention part host-bound.
Plan plan(bool fused) {
  const std::string on = fused ? "true" : "false";
  std::vector<std::string> s = sets();
  s.insert(s.end(), {"software.fused.mla_down_proj=" + on, "software.fused.mla_qkv=" + on});
  return load_plan(kDsv3, s);
}

PartTime part_time(const Plan& p, LayerPart part) { return host_bound::part_time(p, part, 5); }

// A part's memory-bound seconds for `bytes` per token: the GPU holds 1/TP of the microbatch's tokens.
double seconds(const Plan& p, double bytes_per_token) {
  const double tokens = double(p.train.seq_len) * double(p.parallel.micro_batch_size) / double(p.parallel.tp);
  return bytes_per_token * tokens / hbm_bytes_per_s(p);
}

// Megatron's fused MLA YaRN RoPE: q's rotary dims in place (read, write), the kv up projection's
// output and the rotary key read, the key and the value written; what the fused default charges: the
// rotary dims of q and the one rotary key, read and written.
constexpr double kMlaRope = kHeads * (2 * 2 * kRope + 2 * (kNope + kV) + 2 * kQk + 2 * kV) + 2 * kRope;
constexpr double kRopeFused = 2 * 2 * (kHeads * kRope + kRope);
constexpr double kContiguous = 2 * 2 * (kKvLatent + kRope);  // the latent and the rotary key copied

TEST(MlaMegatron, TheShapeIsDeepSeekV3sAndTheRecipesRecompute) {
  const Plan p = plan(false);
  ASSERT_EQ(p.model.hidden_size, int64_t(kHidden));
  ASSERT_EQ(p.model.q_lora_rank, int64_t(kQLatent));
  ASSERT_EQ(p.model.kv_lora_rank, int64_t(kKvLatent));
  ASSERT_TRUE(p.parallel.recompute.has(Recompute::MlaUpProj));
  ASSERT_EQ(p.parallel.tp, 2);
  // The Megatron-Bridge profile runs Megatron-Core's modules; DeepSeek's own stack keeps the default.
  EXPECT_FALSE(load_plan(kDsv3, {}).software.fused_mla_qkv);
  EXPECT_FALSE(load_plan(kDsv3, {}).software.fused_mla_down_proj);
  EXPECT_TRUE(load_plan(default_config_path(), {}).software.fused_mla_qkv);
  EXPECT_TRUE(load_plan(default_config_path(), {}).software.fused_mla_down_proj);
}

TEST(MlaMegatron, TheForwardCastsTheNormsOutputTwiceTheLatentsAndWritesWholeKeysAndValues) {
  const Plan apart = plan(false), fused = plan(true);
  const PartTime a = part_time(apart, LayerPart::AttnF), b = part_time(fused, LayerPart::AttnF);
  // Casts: the norm's output by each down projection (full casts, as the norm writes no amax),
  // the two latents by their norm-fused up projections, where the fused path casts the norm's output
  // once (norm-fed) and no latent.
  const double casts = 2 * kCast * kHidden + kNormFedCast * (kQLatent + kKvLatent) - kNormFedCast * kHidden;
  EXPECT_NEAR(a.memory_s - b.memory_s, seconds(apart, casts + kMlaRope + kContiguous - kRopeFused), 1e-12);
  // Kernels: 2 x 4 + 2 x 3 casts against 3; 2 RoPE and 2 copies against 1 RoPE.
  EXPECT_NEAR(a.kernels_s - b.kernels_s,
              (2 * kCastKernels + 2 * kNormFedCastKernels - kNormFedCastKernels + 2 + 2 - 1) * kHost, 1e-9);
}

TEST(MlaMegatron, TheBackwardCastsEveryProjectionsGradientAndTheRecomputeCopiesQueryKeyAndValueBack) {
  const Plan apart = plan(false), fused = plan(true);
  const PartTime a = part_time(apart, LayerPart::AttnB), b = part_time(fused, LayerPart::AttnB);
  // Gradients cast: linear_proj's (h), q_up's (heads x qk), kv_up's (heads x (nope + v)), q_down's
  // (the q latent), kv_down's (the kv latent and the rotary key), where the fused path charges two
  // (h and the attention's output).
  const double grads = kHidden + kHeads * kQk + kHeads * (kNope + kV) + kQLatent + kKvLatent + kRope;
  const double bytes = kGradCast * (grads - (kHidden + kAttnOut))  // the gradients' casts
                       + kGradCast * kAttnOut                       // linear_proj's saved input, cast again
                       + kMlaRope - kRopeFused + kContiguous         // RoPE's gradient, the split's cat
                       + 3 * 2 * kHidden                             // the two down projections' gradients summed
                       + kNormFedCast * (kQLatent + kKvLatent)       // the recompute: latents cast again,
                       + 2 * 2 * kKvLatent + kMlaRope                //   the latent copied, RoPE rerun,
                       + 2 * 2 * kHeads * (2 * kQk + kV);            //   query, key and value copied back
  EXPECT_NEAR(a.memory_s - b.memory_s, seconds(apart, bytes), 1e-12);
  const int kernels = (5 - 2) * kGradCastKernels + kGradCastKernels + (2 + 1 - 1) + 1 + 2 * kNormFedCastKernels + 1 + 2 + 3;
  EXPECT_NEAR(a.kernels_s - b.kernels_s, kernels * kHost, 1e-9);
}

TEST(MlaMegatron, AFusedDownProjectionCastsOneGradientAndSplitsItsOutput) {
  // Megatron-Core 0.17's FusedMLASelfAttention (--mla-down-proj-fusion) beside the modules' other
  // passes: one down projection, so one gradient cast fewer and no sum of two input gradients, but
  // its output split into the q latent and the kv part, whose gradient is a cat.
  std::vector<std::string> sets = host_bound::sets();
  sets.push_back("software.fused.mla_qkv=false");
  const auto with = [&](bool fused_down) {
    std::vector<std::string> s = sets;
    s.push_back(std::string("software.fused.mla_down_proj=") + (fused_down ? "true" : "false"));
    return load_plan(kDsv3, s);
  };
  const Plan fused = with(true), apart = with(false);
  const PartTime a = part_time(fused, LayerPart::AttnB), b = part_time(apart, LayerPart::AttnB);
  EXPECT_NEAR(a.memory_s - b.memory_s, seconds(fused, 2 * 2 * kQLatent - 3 * 2 * kHidden), 1e-12);
  EXPECT_NEAR(a.kernels_s - b.kernels_s, (-kGradCastKernels - 1) * kHost, 1e-9);
}

TEST(MlaMegatron, WithoutTensorParallelismTheRotaryKeyIsNotCopied) {
  // Sequence parallelism's all-gather copies the strided rotary key; at TP 1 only the latent is.
  const auto with = [](bool fused) {
    std::vector<std::string> s = host_bound::sets();
    s.insert(s.end(), {"parallel.tp=1", std::string("software.fused.mla_qkv=") + (fused ? "true" : "false")});
    return load_plan(kDsv3, s);
  };
  const Plan apart = with(false), fused = with(true);
  const double tokens = double(apart.train.seq_len) * double(apart.parallel.micro_batch_size);
  const PartTime a = part_time(apart, LayerPart::AttnF), b = part_time(fused, LayerPart::AttnF);
  // Both run the down projections apart (the profile's): mla_qkv adds the latents' casts, RoPE's
  // whole keys and values and the latent's copy.
  const double casts = kNormFedCast * (kQLatent + kKvLatent);
  EXPECT_NEAR(a.memory_s - b.memory_s,
              (casts + kMlaRope + 2 * 2 * kKvLatent - kRopeFused) * tokens / hbm_bytes_per_s(apart), 1e-12);
}

TEST(MlaMegatron, OnlyMlaModelsAndOnlyTheirAttentionMove) {
  // A GQA model under the same keys: nothing changes.
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-003.yaml";
  for (LayerPart part : {LayerPart::AttnF, LayerPart::AttnB}) {
    const Plan on = load_plan(llama, {"software.fused.mla_down_proj=true", "software.fused.mla_qkv=true"});
    const Plan off = load_plan(llama, {"software.fused.mla_down_proj=false", "software.fused.mla_qkv=false"});
    EXPECT_DOUBLE_EQ(part_time(on, part).kernels_s, part_time(off, part).kernels_s);
  }
  // The MLP parts of the MLA model do not move.
  for (LayerPart part : {LayerPart::MlpF, LayerPart::MlpB})
    EXPECT_DOUBLE_EQ(part_time(plan(false), part).kernels_s, part_time(plan(true), part).kernels_s);
}

TEST(MlaMegatron, BadValuesAreRefusedNamingTheKey) {
  for (const char* key : {"software.fused.mla_down_proj", "software.fused.mla_qkv"}) {
    try {
      load_plan(default_config_path(), {std::string(key) + "=2"});
      ADD_FAILURE() << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace stepsim
