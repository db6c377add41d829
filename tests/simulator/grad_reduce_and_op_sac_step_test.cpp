// The gradient reduction's format and torchtitan's per-op checkpointing, replayed and in closed
// form, against hand counts.
#include <gtest/gtest.h>

#include "simulator/roofline/roofline.hpp"
#include "tests/config/config_test_util.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

Plan llama(std::vector<std::string> sets) {
  sets.push_back("sim.compute=speed-of-light");
  sets.push_back("train.precision=bf16");
  sets.push_back("hardware.nonmatmul_s_per_token_layer=0");
  return load_plan(source_path("workloads/llama-3.1-8b.yaml"), sets);
}

// BF16 reductions move half the bytes of FP32 ones: the roofline's reduce-scatter halves, and the
// replay's data-parallel busy time (a BF16 all-gather, 2 bytes, and the reduce-scatter, 4 or 2)
// goes from 6 to 4 bytes a parameter.
TEST(GradReduceStep, BF16ReductionsMoveHalfTheGradientBytes) {
  const Roofline fp32 = compute_roofline(llama({})), bf16 = compute_roofline(llama({"parallel.grad_reduce_dtype=bf16"}));
  EXPECT_NEAR(bf16.dp.reducescatter_ib_bytes, fp32.dp.reducescatter_ib_bytes / 2, 1e-9 * fp32.dp.reducescatter_ib_bytes);
  EXPECT_NEAR(bf16.dp.allgather_ib_bytes, fp32.dp.allgather_ib_bytes, 1e-9 * fp32.dp.allgather_ib_bytes);
  const SimResult a = simulate_in_child(llama({}), false);
  const SimResult b = simulate_in_child(llama({"parallel.grad_reduce_dtype=bf16"}), false);
  EXPECT_NEAR(b.comm_s[ops::CommClass::Dp] / a.comm_s[ops::CommClass::Dp], 4.0 / 6.0, 0.01);
}

// torchtitan's per-op checkpointing recomputes wk, wo and w3 of each Llama 3.1 8B layer:
// 2 x 4096 x (8 x 128 + 4096 + 14336) FLOPs per token, at the BF16 rate on top of the step.
TEST(OpSacStep, RecomputesTheUnsavedGemms) {
  const double per_token_layer = 2.0 * 4096 * (8 * 128 + 4096 + 14336);
  const Plan none = llama({}), sac = llama({"parallel.recompute=torchtitan-op"});
  const double tokens = double(none.train.tokens_per_step());
  EXPECT_NEAR(compute_roofline(sac).terms.recompute_flops, per_token_layer * tokens * 32, 1e-9 * per_token_layer * tokens * 32);
  const SimResult a = simulate_in_child(none, false), b = simulate_in_child(sac, false);
  double extra = 0;
  for (size_t r = 0; r < a.ranks.size(); ++r) extra += b.ranks[r].compute_s - a.ranks[r].compute_s;
  // Over the replica's 4 pipeline ranks: the replica's share of the step's tokens, all 32 layers.
  const double expect = per_token_layer * 32 * tokens / double(none.dp()) / (none.hardware.bf16_tflops * 1e12);
  EXPECT_NEAR(extra, expect, 1e-6 * expect);
}

// With float8 linears (torch._scaled_mm, not in the save list) every GEMM of the block is recomputed:
// wq, wk, wv, wo, w1, w3, w2 = 2 x 4096 x (4096 + 2 x 1024 + 4096 + 3 x 14336) FLOPs per token and
// layer, the block's whole forward GEMM work.
TEST(OpSacStep, Float8LinearsRecomputeEveryGemm) {
  const double per_token_layer = 2.0 * 4096 * (4096 + 2 * 1024 + 4096 + 3 * 14336);
  const Plan sac = load_plan(source_path("workloads/llama-3.1-8b.yaml"),
                             {"parallel.recompute=torchtitan-op", "train.precision=fp8", "parallel.fp8_stash=false"});
  const double tokens = double(sac.train.tokens_per_step());
  EXPECT_NEAR(compute_roofline(sac).terms.recompute_flops, per_token_layer * tokens * 32, 1e-9 * per_token_layer * tokens * 32);
}

}  // namespace
}  // namespace stepsim::test
