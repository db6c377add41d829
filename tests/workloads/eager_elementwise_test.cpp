// software.fused.elementwise false: eager PyTorch runs torchtitan's RMSNorm, RoPE and SwiGLU as
// composite ops. Expected bytes are counted by hand from the modules (torchtitan 9dec370) and the
// autograd nodes they record, per value: RMSNorm forward x.float() 2+4, pow 4+4, mean 4, x * r 4+4,
// type_as 4+2, * weight 2+2 = 36; backward 12 + 6 + 8 + 16 + 4 + 20 + 12 + 6 = 84 (the fused
// kernel's 4 and 6). RoPE 20 each way (fused 4). SwiGLU forward 10, backward 18 per FFN value
// (fused 6 and 10). Llama 3.1 8B: h 4096, 32 query and 8 KV heads of 128, FFN 14336.
#include <gtest/gtest.h>

#include <string>

#include "simulator/config/config_loader.hpp"
#include "tests/config/config_test_util.hpp"
#include "tests/workloads/layer_work_sums.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/memory/activation_bytes.hpp"

namespace stepsim {
namespace {

using test::memory_bytes;

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
constexpr double kH = 4096, kRope = (32 + 8) * 128.0, kFfn = 14336;

Plan llama(bool eager, const std::string& recompute = "none") {
  return load_plan(kLlama, {"train.precision=bf16", "parallel.recompute=" + recompute,
                            std::string("software.fused.elementwise=") + (eager ? "false" : "true")});
}

// A layer's memory-bound ops, all parts: bytes a token and kernels.
struct Totals {
  double bytes = 0;
  int kernels = 0;
};
Totals layer_totals(const Plan& p) {
  Totals t;
  for (const PartWork& part : layer_work(p, 5, 1.0, 0).parts)
    for (const MemoryOp& op : part.memory) t.bytes += op.bytes_per_token, t.kernels += op.kernels;
  return t;
}

TEST(EagerElementwise, EachGroupCostsItsCompositeOpsBytes) {
  const Plan fused = llama(false), eager = llama(true);
  EXPECT_DOUBLE_EQ(memory_bytes(fused, 5, LayerPart::AttnF, "attn_norm"), 4 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::AttnF, "attn_norm"), 36 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::AttnB, "attn_norm_bwd"), 84 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::MlpF, "mlp_norm"), 36 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::MlpB, "mlp_norm_bwd"), 84 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(fused, 5, LayerPart::AttnF, "rope"), 4 * kRope);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::AttnF, "rope"), 20 * kRope);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::AttnB, "rope_bwd"), 20 * kRope);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::MlpF, "activation"), 10 * kFfn);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::MlpB, "activation_bwd"), 18 * kFfn);
  // The whole layer: two norms (32 + 78 more bytes a value each), RoPE (16 + 16), SwiGLU (4 + 8):
  // 901,120 + 163,840 + 172,032 = 1,236,992 more bytes a token; nothing else moves.
  EXPECT_DOUBLE_EQ(layer_totals(eager).bytes - layer_totals(fused).bytes, 1'236'992);
  // Kernels: a norm 8 forward and 14 backward against 1 and 2, RoPE 6 each way against 1, SwiGLU 2
  // and 3 against 1 and 1: 2 x 19 + 10 + 3 = 51 more.
  EXPECT_EQ(layer_totals(eager).kernels - layer_totals(fused).kernels, 51);
}

// The final norm before the LM head is the same RMSNorm module.
TEST(EagerElementwise, TheFinalNormIsTheSameComposite) {
  EXPECT_DOUBLE_EQ(memory_bytes(lm_head_passes(llama(false), 1.0).forward, "final_norm"), 4 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(lm_head_passes(llama(true), 1.0).forward, "final_norm"), 36 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(lm_head_passes(llama(true), 1.0).input_grad, "final_norm_bwd"), 84 * kH);
}

// What the composite ops' autograd nodes keep for the backward beyond the fused kernels: per norm the
// FP32 input (4h) and the BF16 product before the weight (2h), RoPE's FP32 queries and keys (4 per
// rotary value), SwiGLU's silu output (2f): 2 x 6 x 4096 + 4 x 5120 + 2 x 14336 = 98,304 bytes a
// token of each layer. Recomputing everything (full) keeps only the layer input either way.
TEST(EagerElementwise, TheCompositeOpsKeepTheirSavedTensors) {
  EXPECT_DOUBLE_EQ(layer_activations(llama(true), false).saved_per_token -
                       layer_activations(llama(false), false).saved_per_token,
                   98'304);
  EXPECT_DOUBLE_EQ(layer_activations(llama(true, "full"), false).saved_per_token,
                   layer_activations(llama(false, "full"), false).saved_per_token);
  EXPECT_DOUBLE_EQ(layer_activations(llama(true, "full"), false).recompute_per_token -
                       layer_activations(llama(false, "full"), false).recompute_per_token,
                   98'304);
}

// torchtitan's per-op checkpointing reruns every memory-bound op of the forward in the backward:
// eager, the norms' composite ops run again there.
TEST(EagerElementwise, PerOpCheckpointingRerunsTheCompositeForward) {
  const Plan eager = llama(true, "torchtitan-op");
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::AttnB, "attn_norm"), 36 * kH);
  EXPECT_DOUBLE_EQ(memory_bytes(eager, 5, LayerPart::MlpB, "activation"), 10 * kFfn);
}

TEST(EagerElementwise, TheEagerProfileSetsItAndAFusedCastContradictsIt) {
  EXPECT_FALSE(load_plan(kLlama, {"software.profile=torchtitan"}).software.fused_elementwise);
  EXPECT_TRUE(load_plan(kLlama, {"software.profile=torchtitan-compile"}).software.fused_elementwise);
  EXPECT_TRUE(load_plan(kLlama).software.fused_elementwise);
  // nemo-25's norms write their FP8 input; eager composite ops cannot.
  test::expect_message(test::config_error_of([&] {
                         load_plan(kLlama, {"software.profile=nemo-25", "train.precision=fp8",
                                            "software.fused.elementwise=false"});
                       }),
                       {"software.fused.elementwise", "software.fused.norm_cast", "set those false"});
  // In BF16 nothing is cast, so nothing contradicts.
  EXPECT_FALSE(load_plan(kLlama, {"software.profile=nemo-25", "train.precision=bf16", "software.fused.elementwise=false"})
                   .software.fused_elementwise);
}

}  // namespace
}  // namespace stepsim
