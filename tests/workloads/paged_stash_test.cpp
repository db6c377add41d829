// parallel.moe_paged_stash (Megatron-Core's --moe-paged-stash, as NVIDIA's full-iteration MXFP8
// recipes run it): after an MoE layer's forward each tensor Transformer Engine's fused grouped MLP
// saves for the backward is copied into the stash, and back before the layer's backward. Checked
// against the saved tensors read from Transformer Engine's source (ops/fused/grouped_mlp.py,
// mark_grouped_tensor: the first GEMM's input and the second's, column-wise only, the activation's
// BF16 input, the FP32 routing probabilities) on the shipped Qwen3-30B-A3B GB300 row QW-X-039
// (hidden 2048, expert width 768, SwiGLU, MXFP8).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/layer_work_sums.hpp"
#include "tests/workloads/host_bound_parts.hpp"

namespace stepsim {
namespace {

constexpr double kHidden = 2048, kExpertWidth = 768;
// MXFP8's column-wise copy: a byte per value and an E8M0 scale per 32 rows.
constexpr double kMxfp8 = 1 + 1.0 / 32;

const std::string kQwen = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-X-039.yaml";

Plan plan(bool stash, std::vector<std::string> more = {}) {
  std::vector<std::string> s = host_bound::sets();
  s.insert(s.end(), {"software.cuda_graphs=none", "parallel.moe_paged_stash=" + std::string(stash ? "true" : "false")});
  s.insert(s.end(), more.begin(), more.end());
  return load_plan(kQwen, s);
}

constexpr auto op = test::memory_op;

double routed_rows(const Plan& p) { return cost::mean_microbatch_shape(p).routed_rows; }

LayerWork work(const Plan& p) { return layer_work(p, 5, p.sequences_per_microbatch(), routed_rows(p)); }

TEST(PagedStash, EachRowsSavedTensorsAreCopiedOutAfterTheForwardAndBackBeforeTheBackward) {
  const Plan p = plan(true);
  ASSERT_TRUE(p.parallel.moe_paged_stash);  // the row's own config says so too
  ASSERT_TRUE(load_plan(kQwen, {}).parallel.moe_paged_stash);
  // Per routed row: fc1's input (2048) and fc2's (768) column-wise in MXFP8, the activation's input
  // (gate and up, 2 x 768, BF16) and the probability (FP32): 2904 + 3072 + 4 = 5980 bytes, each read
  // and written once by the copy.
  const double saved = kMxfp8 * (kHidden + kExpertWidth) + 2 * 2 * kExpertWidth + 4;
  ASSERT_DOUBLE_EQ(saved, 5980);
  const LayerWork w = work(p);
  const MemoryOp* out = op(w.part(LayerPart::MlpF), "paged_stash");
  const MemoryOp* back = op(w.part(LayerPart::MlpB), "paged_stash_reload");
  ASSERT_NE(out, nullptr);
  ASSERT_NE(back, nullptr);
  EXPECT_DOUBLE_EQ(out->bytes_per_row, 2 * saved);
  EXPECT_DOUBLE_EQ(out->bytes_per_token, 0);
  EXPECT_DOUBLE_EQ(back->bytes_per_row, 2 * saved);
  // One copy kernel per marked tensor: two GEMM inputs' data and scales, the activation input, the
  // probabilities.
  EXPECT_EQ(out->kernels, 6);
  EXPECT_EQ(back->kernels, 6);
  const LayerWork none = work(plan(false));
  EXPECT_EQ(op(none.part(LayerPart::MlpF), "paged_stash"), nullptr);
  EXPECT_EQ(op(none.part(LayerPart::MlpB), "paged_stash_reload"), nullptr);
}

TEST(PagedStash, TheCopiesCostTheirBytesOverHbmAndALaunchPerTensor) {
  const Plan on = plan(true), off = plan(false);
  const double bytes = 2 * 5980 * routed_rows(on);
  for (const LayerPart part : {LayerPart::MlpF, LayerPart::MlpB}) {
    const auto a = host_bound::part_time(on, part, 5), b = host_bound::part_time(off, part, 5);
    EXPECT_NEAR(a.memory_s - b.memory_s, bytes / host_bound::hbm_bytes_per_s(on), 1e-12);
    // Host-bound: the six launches' host time hides their GPU time.
    EXPECT_NEAR(a.kernels_s - b.kernels_s, 6 * host_bound::kHost, 1e-9);
  }
  // 8 GPUs x 32,768 tokens x top-8 over 8 GPUs: 262,144 rows per GPU.
  EXPECT_DOUBLE_EQ(routed_rows(on), 8.0 * 4096 * 8);
}

TEST(PagedStash, InBf16TheGemmInputsAreSavedAsTheyAre) {
  const Plan p = plan(true, {"train.precision=bf16", "train.fp8_attention=false", "software.fused.grouped_mlp=false"});
  const LayerWork w = work(p);
  const MemoryOp* out = op(w.part(LayerPart::MlpF), "paged_stash");
  ASSERT_NE(out, nullptr);
  EXPECT_DOUBLE_EQ(out->bytes_per_row, 2 * (2 * (kHidden + kExpertWidth) + 2 * 2 * kExpertWidth + 4));
  EXPECT_EQ(out->kernels, 4);
}

TEST(PagedStash, MegatronRunsItOnlyWithHybridEpsBudgetAndWithoutCpuOffloading) {
  EXPECT_THROW(plan(true, {"parallel.moe_flex_backend=deepep"}), ConfigError);
  EXPECT_THROW(plan(true, {"parallel.moe_dispatcher=alltoall"}), ConfigError);
  EXPECT_THROW(plan(true, {"parallel.moe_grouped_gemm=false"}), ConfigError);
  EXPECT_THROW(load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-001.yaml", {"parallel.moe_paged_stash=true"}),
               ConfigError);  // a dense model
  EXPECT_NO_THROW(load_plan(kQwen, {"parallel.moe_flex_backend=deepep", "parallel.moe_paged_stash=false"}));
}

}  // namespace
}  // namespace stepsim
