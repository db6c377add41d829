// train.fp8_attention: Transformer Engine quantises the attention's inputs before its FP8 kernel
// (attention/dot_product_attention/utils.py combine_and_quantize, backends.py FusedAttnFunc), and the
// presets' FP8 attention curves time the kernel alone. Checked by hand on two shipped rows: QW-X-039
// (Qwen3-30B-A3B, MXFP8: 32 query heads, 4 KV heads, head dim 128) and L3-X-003 (Llama 3 8B,
// per-tensor FP8 with delayed scaling: 32 and 8 heads of 128).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/layer_work_sums.hpp"

namespace stepsim {
namespace {

constexpr auto op = test::memory_op;
const std::string kQwen = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-X-039.yaml";
const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-003.yaml";

TEST(Fp8AttentionCasts, Mxfp8QuantisesQueriesAndKeysBothWaysValuesOnceAndTheOutputGradient) {
  const LayerWork w = layer_work(load_plan(kQwen, {}), 0, 1.0, 4096.0 * 8);
  // q 32 x 128 and k 4 x 128 values a token, each BF16 read (2) and both MXFP8 layouts written
  // (2 x (1 + 1/32)); v 4 x 128, one layout (1 + 1/32). Backward: dO, 32 x 128, both layouts.
  const double both = 2 + 2 * (1 + 1.0 / 32), one = 2 + (1 + 1.0 / 32);
  const MemoryOp* fwd = op(w.part(LayerPart::AttnF), "attention_quantise");
  const MemoryOp* bwd = op(w.part(LayerPart::AttnB), "attention_quantise_bwd");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_DOUBLE_EQ(fwd->bytes_per_token, (4096 + 512) * both + 512 * one);  // 20,272
  EXPECT_DOUBLE_EQ(bwd->bytes_per_token, 4096 * both);                      // 16,640
  EXPECT_EQ(fwd->kernels, 3);
  EXPECT_EQ(bwd->kernels, 1);
  // BF16 attention quantises nothing for it.
  const LayerWork bf16 = layer_work(load_plan(kQwen, {"train.fp8_attention=false"}), 0, 1.0, 4096.0 * 8);
  EXPECT_EQ(op(bf16.part(LayerPart::AttnF), "attention_quantise"), nullptr);
  EXPECT_EQ(op(bf16.part(LayerPart::AttnB), "attention_quantise_bwd"), nullptr);
}

TEST(Fp8AttentionCasts, PerTensorFp8ConcatenatesQueriesKeysAndValuesAndCastsThemOnce) {
  const LayerWork w =
      layer_work(load_plan(kLlama, {"train.fp8_recipe=delayed", "train.fp8_attention=true"}), 0, 1.0, 0);
  // q 4096, k 1024, v 1024 values a token: copied into one buffer (2 read, 2 written), then cast
  // (2 read, 1 written); the backward casts dO (4096 values, 3 bytes each).
  EXPECT_DOUBLE_EQ(op(w.part(LayerPart::AttnF), "attention_quantise")->bytes_per_token, (4096 + 1024 + 1024) * (4 + 3));
  EXPECT_EQ(op(w.part(LayerPart::AttnF), "attention_quantise")->kernels, 2);
  EXPECT_DOUBLE_EQ(op(w.part(LayerPart::AttnB), "attention_quantise_bwd")->bytes_per_token, 4096 * 3);
}

}  // namespace
}  // namespace stepsim
