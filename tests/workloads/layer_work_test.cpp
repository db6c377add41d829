// The per-layer kernels must add up to the seed's step FLOPs, and the stage split must cover every
// layer once with balanced pipeline ranks.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/layer_work_sums.hpp"

namespace stepsim {
namespace {

Plan plan(std::vector<std::string> sets = {}) { return load_plan(default_config_path(), sets); }

TEST(LayerWork, KernelsOfAllLayersAddUpToTheStepFlops) {
  const Plan p = plan();
  // Whole model for one 4096-token sequence, balanced routing (4096 x 8 rows per GPU).
  double fp8 = 0, bf16 = 0;
  for (int64_t l = 0; l < 61; ++l) {
    const auto w = layer_work(p, l, 1.0, 4096.0 * 8);
    for (const auto& part : w.parts) {
      fp8 += part.flops(Precision::FP8);
      bf16 += part.flops(Precision::BF16);
    }
  }
  bf16 += 3 * lm_head_work(p, 1.0).flops(Precision::BF16);
  // By hand: 6 N T with N = 36,625,618,432 minus norms (not matmuls: 61 x 16,384 + 7,168 final),
  // plus the attention core (QK^T x4, PV x3, causal) and the MLA up-projection recompute.
  const double t = 4096, n_matmul = 36'625'618'432.0 - 61 * 16384.0 - 7168;
  const double qk = t * t * 128 * 192, pv = t * t * 128 * 128;  // 2 S^2/2 h d
  const double attention = 61 * (4 * qk + 3 * pv);
  const double recompute = 2 * 61 * (1536.0 * 128 * 192 + 512.0 * 128 * 256) * t;
  EXPECT_NEAR(fp8 + bf16, 6 * n_matmul * t + attention + recompute, 1e-9 * (fp8 + bf16));
  // BF16: routers (58 x (256 x 7168 + 256)) and LM head, forward and both backward GEMMs, plus attention.
  const double bf16_params = 58 * (256.0 * 7168 + 256) + 129280.0 * 7168;
  EXPECT_NEAR(bf16, 6 * bf16_params * t + attention, 1e-9 * bf16);
}

TEST(LayerWork, RoutedExpertRowsFollowTheTokenCount) {
  const Plan p = plan();
  const auto w = layer_work(p, 10, 1.0, 32768);
  // DeepSeek's trace: fc1 over 32768 rows is 2 x 32768 x 7168 x 4096 = 1.92e12 FLOP; fc2 half of it.
  double routed = 0;
  for (const auto& k : w.part(LayerPart::MlpF).kernels)
    if (k.name == "routed_experts") routed = k.flops;
  EXPECT_NEAR(routed, 1.92e12 * 1.5, 0.01e12);
  EXPECT_TRUE(w.moe);
  EXPECT_FALSE(layer_work(p, 2, 1.0, 0).moe);  // first_k_dense_replace = 3
}

// Megatron-Core's MoE layer with BF16 tokens (Qwen3-30B-A3B, MXFP8, as Megatron-Bridge runs it): the
// router and the dispatch read the pre-norm's BF16 output, so Transformer Engine's GroupedLinear
// quantises the experts' input after the dispatch, per routed row and per local expert (split_quantize),
// and their output gradients per row too; with an FP8 dispatch the tokens are quantised once each.
TEST(LayerWork, BfloatTokensAreQuantisedPerRoutedRowAfterTheDispatch) {
  const std::string qwen = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-X-001.yaml";
  const Plan p = load_plan(qwen, {});
  const auto w = layer_work(p, 0, 4.0, 4.0 * 4096 * 8 / 8);
  // MXFP8: a row-wise and a column-wise copy, each a byte per value and an E8M0 scale per 32.
  const double h = 2048, f = 768, quantise = 2 + 2 * (1 + 1.0 / 32);
  const auto op = test::memory_op;
  const PartWork& mf = w.part(LayerPart::MlpF);
  ASSERT_NE(op(mf, "expert_quantise"), nullptr);
  EXPECT_DOUBLE_EQ(op(mf, "expert_quantise")->bytes_per_row, quantise * h);
  EXPECT_DOUBLE_EQ(op(mf, "expert_quantise")->bytes_per_token, 0);
  EXPECT_TRUE(op(mf, "expert_quantise")->split_per_expert);
  EXPECT_DOUBLE_EQ(op(mf, "expert_quantise_fc2")->bytes_per_row, quantise * f);
  EXPECT_EQ(op(mf, "quantise"), nullptr);
  EXPECT_DOUBLE_EQ(op(mf, "mlp_norm")->bytes_per_token, 4 * h);  // BF16 in, BF16 out: no cast to fuse
  const PartWork& mb = w.part(LayerPart::MlpB);
  // A gradient too is cast once for the two GEMMs that read it (the dgrad row-wise, the wgrad
  // column-wise): one read, both copies written.
  EXPECT_DOUBLE_EQ(op(mb, "expert_quantise_grads")->bytes_per_row, quantise * h);
  EXPECT_DOUBLE_EQ(op(mb, "expert_quantise_grads_fc1")->bytes_per_row, quantise * 2 * f);  // SwiGLU: gate and up
  EXPECT_EQ(op(mb, "quantise_grads"), nullptr);

  // Qwen3's QK RMSNorm (model.qk_norm): 32 query and 4 key heads of 128, BF16 read and written forward;
  // dy and x read, dx written backward.
  EXPECT_DOUBLE_EQ(op(w.part(LayerPart::AttnF), "qk_norms")->bytes_per_token, 2 * 2 * (32 + 4) * 128.0);
  EXPECT_DOUBLE_EQ(op(w.part(LayerPart::AttnB), "qk_norms_bwd")->bytes_per_token, 3 * 2 * (32 + 4) * 128.0);
  EXPECT_EQ(op(layer_work(plan(), 0, 1.0, 0).part(LayerPart::AttnF), "qk_norms"), nullptr);  // DeepSeek-V3: none

  const auto fp8_tokens = layer_work(load_plan(qwen, {"parallel.moe_fp8_dispatch=true"}), 0, 4.0, 4.0 * 4096);
  EXPECT_EQ(op(fp8_tokens.part(LayerPart::MlpF), "expert_quantise"), nullptr);
  ASSERT_NE(op(fp8_tokens.part(LayerPart::MlpF), "quantise"), nullptr);
  // MXFP8 tokens: Transformer Engine 2.12's norm writes BF16 (no cuDNN norm in the recipe:
  // software.fused.norm_block_cast false) and the cast follows it, h values at `quantise` bytes each.
  EXPECT_DOUBLE_EQ(op(fp8_tokens.part(LayerPart::MlpF), "quantise")->bytes_per_token, quantise * h);
  // Backward: the output gradient cast per token before it travels, the first GEMM's (gate and up)
  // per routed row, as with BF16 tokens.
  EXPECT_DOUBLE_EQ(op(fp8_tokens.part(LayerPart::MlpB), "quantise_grads")->bytes_per_token, quantise * h);
  EXPECT_DOUBLE_EQ(op(fp8_tokens.part(LayerPart::MlpB), "quantise_grads")->bytes_per_row, quantise * 2 * f);
  const auto fused = layer_work(load_plan(qwen, {"parallel.moe_fp8_dispatch=true", "software.fused.norm_block_cast=true"}),
                                0, 4.0, 4.0 * 4096);
  EXPECT_DOUBLE_EQ(op(fused.part(LayerPart::MlpF), "quantise")->bytes_per_token, 0);  // the fused norm writes it
}

// NVFP4 as Transformer Engine 2.12 quantises an activation or a gradient: the Hadamard amax pass,
// the row-wise cast, the Hadamard column-wise cast; three reads of the BF16 tensor (2 bytes each),
// both copies written (E2M1, half a byte, and an E4M3 scale per 16 values, each): 7.125 bytes per
// value in three kernels, once for a gradient's dgrad and wgrad copies alike. Llama 3 70B at TP 2
// (L3-X-037, Megatron-Bridge: Transformer Engine's norm writes BF16 before an NVFP4 cast, so the QKV
// projection's input is cast too).
TEST(LayerWork, Nvfp4CastsReadTheirInputThreeTimes) {
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-037.yaml", {});
  const auto w = layer_work(p, 0, 1.0, 0);
  const double q = 3 * 2 + 2 * (0.5 + 1.0 / 16), h = 8192, attn_out = 64 * 128;
  const auto op = test::memory_op;
  const MemoryOp* fwd = op(w.part(LayerPart::AttnF), "quantise");
  ASSERT_NE(fwd, nullptr);
  EXPECT_DOUBLE_EQ(fwd->bytes_per_token, q * (h + attn_out));  // the QKV and output projections' inputs
  EXPECT_EQ(fwd->kernels, 6);
  const MemoryOp* grads = op(w.part(LayerPart::AttnB), "quantise_grads");
  ASSERT_NE(grads, nullptr);
  EXPECT_DOUBLE_EQ(grads->bytes_per_token, q * (h + attn_out));
  EXPECT_EQ(grads->kernels, 6);
}

// FP8 current scaling ("tensorwise") as Transformer Engine 2.12 casts (quantizer.cpp, quantize_impl;
// common/recipe/current_scaling.cu): a kernel zeroes the amax, an amax pass reads the BF16 tensor
// (2 bytes a value), a kernel turns the amax into the scale, the cast reads it again and writes FP8
// (1 byte; no block scales): 5 bytes a value in 4 kernels, where delayed scaling casts in 1 kernel at
// 3 bytes. A norm feeding FP8 GEMMs writes BF16 and the amax (normalization.cpp,
// FUSED_NORM_AMAX_FP8), so its cast is 3 bytes in 3 kernels; under delayed
// scaling the norm writes FP8 itself (FULLY_FUSED): no cast. A gradient: one amax pass, then one
// copy at 3 bytes: on a B200 the FP8 GEMMs read it in either layout, so the wgrad needs no transposed
// copy (quantizer.cpp: nvte_is_non_tn_fp8_gemm_supported). Llama 3 8B (L3-X-003, Megatron-Bridge, TP 1).
TEST(LayerWork, CurrentScalingReadsEachTensorForItsAmaxFirst) {
  const std::string row = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-003.yaml";
  const Plan current = load_plan(row, {"train.fp8_recipe=tensorwise"});
  const Plan delayed = load_plan(row, {"train.fp8_recipe=delayed"});
  const auto op = test::memory_op;
  const double h = 4096, attn_out = 32 * 128, f = 14336;
  const double cast = 2 + 1, amax = 2;
  const auto cw = layer_work(current, 0, 1.0, 0), dw = layer_work(delayed, 0, 1.0, 0);
  // Attention forward: the norm-fed QKV input (h) and the output projection's input (attn_out).
  const MemoryOp* c = op(cw.part(LayerPart::AttnF), "quantise");
  const MemoryOp* d = op(dw.part(LayerPart::AttnF), "quantise");
  ASSERT_NE(c, nullptr);
  ASSERT_NE(d, nullptr);
  EXPECT_NEAR(c->bytes_per_token, cast * h + (amax + cast) * attn_out, 1e-6);
  EXPECT_EQ(c->kernels, 3 + 4);
  EXPECT_NEAR(d->bytes_per_token, cast * attn_out, 1e-6);
  EXPECT_EQ(d->kernels, 1);
  // The norm itself: BF16 in and out under current scaling; FP8 out under delayed.
  EXPECT_NEAR(op(cw.part(LayerPart::AttnF), "attn_norm")->bytes_per_token, 4 * h, 1e-6);
  EXPECT_NEAR(op(dw.part(LayerPart::AttnF), "attn_norm")->bytes_per_token, 2 * h + 1 * h, 1e-6);
  // MLP backward: the gradients of the down projection's output (h) and of its input (f).
  const MemoryOp* g = op(cw.part(LayerPart::MlpB), "quantise_grads");
  ASSERT_NE(g, nullptr);
  EXPECT_NEAR(g->bytes_per_token, (amax + cast) * (h + f), 1e-6);
  EXPECT_EQ(g->kernels, 2 * (1 + 3));
  EXPECT_EQ(op(dw.part(LayerPart::MlpB), "quantise_grads")->kernels, 2 * 1);
  // On an H100 (Hopper takes FP8 operands only as A x B^T) the wgrad's transposed copy is written too,
  // by the same kernel (Transformer Engine's cast-transpose: one read, two FP8 copies written), for
  // a gradient as for an activation.
  const Plan hopper = load_plan(row, {"train.fp8_recipe=tensorwise", "hardware.preset=h100-sxm"});
  const auto hw = layer_work(hopper, 0, 1.0, 0);
  const double cast_transpose = 2 + 1 + 1;
  const MemoryOp* hg = op(hw.part(LayerPart::MlpB), "quantise_grads");
  ASSERT_NE(hg, nullptr);
  EXPECT_NEAR(hg->bytes_per_token, (amax + cast_transpose) * (h + f), 1e-6);
  EXPECT_EQ(hg->kernels, 2 * (1 + 3));
  EXPECT_NEAR(op(hw.part(LayerPart::AttnF), "quantise")->bytes_per_token,
              cast_transpose * h + (amax + cast_transpose) * attn_out, 1e-6);  // the norm took its amax
}

// Transformer Engine's split_quantize (extensions/cast.cpp, multi_tensor_quantize_impl) casts every
// expert's rows in one kernel under delayed scaling (nvte_multi_cast_transpose) and one expert at a
// time otherwise; the experts' rows arrive in BF16 (moe_fp8_dispatch false). Qwen3-30B-A3B at EP 16
// (QW-H-001): 128 / 16 = 8 local experts, the first GEMM's input cast in 1 kernel or in 8 x 4.
TEST(PartCost, DelayedScalingCastsEveryExpertsRowsInOneKernel) {
  const std::string row = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-H-001.yaml";
  const auto kernels_of = [&](const std::string& recipe) {
    const Plan p = load_plan(row, {"train.fp8_recipe=" + recipe});
    const auto w = layer_work(p, 0, 1.0, cost::mean_microbatch_shape(p).routed_rows);
    double total = 0, looped = 0;
    for (const MemoryOp& m : w.part(LayerPart::MlpF).memory)
      if (m.name == "expert_quantise") {
        PartWork one;
        one.memory.push_back(m);
        const auto s = cost::part_seconds(p, one, cost::mean_microbatch_shape(p)).all();
        total = s.kernels, looped = s.looped;
      }
    return std::pair{total, looped};
  };
  EXPECT_EQ(kernels_of("delayed"), (std::pair{1.0, 0.0}));
  EXPECT_EQ(kernels_of("tensorwise"), (std::pair{8.0 * 4, 8.0 * 4 - 4}));
  EXPECT_EQ(kernels_of("blockwise"), (std::pair{8.0, 7.0}));
}

// Megatron's alltoall dispatcher launches, per MoE layer forward and beyond its permute and sort
// kernels, what the megatron-bridge profile counts in its source (software.alltoall_dispatch_launches:
// 6 counting ops, the counts' all-gather, 4 copies to the host, 3 row-map passes, 2 chunk-sort maps,
// the probabilities' all-to-all = 17); the flex dispatcher (HybridEP, QW-H-002) launches none of them.
TEST(LayerWork, TheAlltoallDispatcherLaunchesItsCountsAndMaps) {
  const auto launches = [](const std::string& row, const std::vector<std::string>& sets) {
    const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/" + row + ".yaml", sets);
    int n = 0;
    const auto w = layer_work(p, 3, 1.0, 4096.0 * 8);
    for (const MemoryOp& m : w.part(LayerPart::MlpF).memory)
      if (m.name == "alltoall_dispatch_launches") n += m.kernels;
    return n;
  };
  EXPECT_EQ(launches("QW-H-003", {}), 6 + 1 + 4 + 3 + 2 + 1);
  EXPECT_EQ(launches("QW-H-003", {"software.alltoall_dispatch_launches=0"}), 0);
  EXPECT_EQ(launches("QW-H-002", {}), 0);
}

// The MoE block's Python-level calls per layer and microbatch, counted in docs/megatron-moe-audit.md
// (section 2.6): the flex dispatcher's 38 (router 9 + 1 of the dispatcher's + the SwiGLU and 6 bundles
// forward; 13 + 8 backward), against which software.moe_layer_host_s is fitted; the alltoall
// dispatcher's 59 Python-issued kernels and 10 calls into Transformer Engine's loops (config (c): TP 2,
// FP8, 4 local experts): 41 forward, 28 backward. Its host time is moe_layer_host_s per 38 calls.
TEST(LayerWork, TheMoeBlocksHostTimeFollowsItsPythonCalls) {
  const auto load = [](const std::string& row, const std::vector<std::string>& sets = {}) {
    return load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/" + row + ".yaml", sets);
  };
  const auto calls = [](const Plan& p) {
    const MoePythonCalls c = moe_python_calls(p);
    return std::pair{c.forward, c.backward};
  };
  EXPECT_EQ(calls(load("QW-H-002")), (std::pair{17.0, 21.0}));  // flex (HybridEP)
  const Plan alltoall = load("QW-H-003");
  EXPECT_EQ(calls(alltoall), (std::pair{10.0 + 23 + 1 + 3 + 4, 7.0 + 9 + 1 + 2 + 3 + 6}));
  // Without FP8 the experts' rows are not padded (3 calls each way) and their grouped linears cast
  // nothing (2 split_quantize calls each way); at TP 1 the router's counts need no all-reduce.
  EXPECT_EQ(calls(load("QW-H-003", {"train.precision=bf16"})), (std::pair{41.0 - 3 - 2, 28.0 - 3 - 2}));
  EXPECT_EQ(calls(load("QW-X-002")), (std::pair{40.0, 28.0}));
  // An FP32 router (parallel.moe_router_dtype): its backward casts the input and the weight to FP32
  // and both gradients back (4 calls, any dispatcher); the flex dispatcher's probabilities are FP32
  // already, so its cast to FP32 and the cast's gradient are no calls (audit D1 and DB2); the
  // allgather dispatcher casts the expert outputs to FP32 around its reduce-scatter and back.
  const double router_casts = 4;
  EXPECT_EQ(calls(load("QW-H-002", {"parallel.moe_router_dtype=fp32"})), (std::pair{17.0 - 1, 21.0 - 1 + router_casts}));
  EXPECT_EQ(calls(load("QW-H-003", {"parallel.moe_router_dtype=fp32"})), (std::pair{41.0, 28.0 + router_casts}));
  EXPECT_EQ(calls(load("QW-H-002", {"parallel.moe_dispatcher=allgather", "parallel.moe_flex_backend=deepep",
                            "parallel.moe_router_dtype=fp32"})),
            (std::pair{17.0 + 2, 21.0 + router_casts + 2}));
  // The flex dispatcher run by DeepEP rather than HybridEP (parallel.moe_flex_backend), the calls
  // around the all-to-alls as docs/megatron-mla-audit.md section 2.4 lists them (Megatron-Core 0.14,
  // the fused multi-hot map), one per op or autograd node, against HybridEP's (megatron-moe-audit.md 2.3).
  const std::vector<std::string_view> deepep_forward = {"topk", "get_dispatch_layout", "dispatch", "indices_to_multihot",
                                                        "row_id_map 1", "row_id_map 2", "row_id_map 3",
                                                        "permute", "unpermute", "combine"};
  const std::vector<std::string_view> deepep_backward = {"cached dispatch", "unpermute grad", "permute grad",
                                                         "multihot grad", "dispatch grad (combine)", "TopkBackward"};
  const std::vector<std::string_view> hybridep_forward = {"dispatch_with_permute", "combine_with_unpermute"};
  const std::vector<std::string_view> hybridep_backward = {"combine grad", "dispatch grad"};
  const double more_forward = double(deepep_forward.size() - hybridep_forward.size());
  const double more_backward = double(deepep_backward.size() - hybridep_backward.size());
  EXPECT_EQ(calls(load("QW-H-008")), (std::pair{17.0 + more_forward, 21.0 + more_backward}));
  EXPECT_EQ(calls(load("QW-H-002", {"parallel.moe_flex_backend=deepep"})), (std::pair{17.0 + more_forward, 21.0 + more_backward}));
  // DeepSeek-V3 on 1024 H100: DeepEP, an FP32 router, TP 2 (the routing counts' all-reduce).
  const Plan dsv3 = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/DSV3-H100-1024-FP8.yaml");
  EXPECT_EQ(calls(dsv3), (std::pair{17.0 + 1 - 1 + more_forward, 21.0 - 1 + router_casts + more_backward}));
  // The host time: moe_layer_host_s x calls / 38, forward and backward apart.
  const auto w = layer_work(alltoall, 3, 1.0, 4096.0 * 8);
  const double per_call = alltoall.software.moe_layer_host_s / 38;
  EXPECT_NEAR(w.part(LayerPart::MlpF).framework_host_s, 41 * per_call, 1e-12);
  EXPECT_NEAR(w.part(LayerPart::MlpB).framework_host_s, 28 * per_call, 1e-12);
}

TEST(LayerPartition, CoversEveryLayerOnceAndBalancesRanks) {
  const Plan p = plan();
  const auto stages = partition_layers(p);
  ASSERT_EQ(stages.size(), 16u);
  int64_t next = 0;
  for (const auto& s : stages) {
    EXPECT_EQ(s.first, next);
    EXPECT_GE(s.count, 1);
    next += s.count;
  }
  EXPECT_EQ(next, 61);
  EXPECT_TRUE(stages.back().has_lm_head);
  // DualPipeV rank r holds stages r and 15 - r; every rank within 15 % of the mean cost.
  std::vector<double> rank_cost(8, 0.0);
  double total = 0;
  for (int64_t s = 0; s < 16; ++s) {
    double c = 0;
    for (int64_t l = stages[size_t(s)].first; l < stages[size_t(s)].first + stages[size_t(s)].count; ++l)
      c += layer_cost_s_per_token(p, l);
    if (stages[size_t(s)].has_lm_head) c += lm_head_cost_s_per_token(p);
    rank_cost[size_t(s < 8 ? s : 15 - s)] += c;
    total += c;
  }
  for (double c : rank_cost) EXPECT_NEAR(c, total / 8, 0.15 * total / 8);
  // The head costs about three layers at BF16, so the last stage keeps only a layer or two.
  EXPECT_LE(stages.back().count, 2);
}

// Without parallel.stage_layers a plan's layers go where its release's framework puts them
// (software.pipeline_split). Llama 3.1 8B (32 layers) at PP 4 under the default Megatron-Core
// profile: 32 / 4 = 8 a stage, the LM head on the last one besides. Balanced instead, the last
// stage gives up layers for the head (about two layers' worth at this vocabulary). torchtitan
// counts the embedding and the head as a layer each: 34 over 4 is 9, 9, 8, 8, less one at each
// end: 8, 9, 8, 7. Megatron-Core refuses 30 layers over 4 stages; stepsim then balances and says why.
TEST(LayerPartition, ADefaultSplitIsTheReleasesFrameworks) {
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  const auto counts = [&](const std::vector<std::string>& sets) {
    std::vector<int64_t> out;
    for (const StageLayers& s : partition_layers(load_plan(llama, sets))) out.push_back(s.count);
    return out;
  };
  EXPECT_EQ(counts({}), (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(split_origin(load_plan(llama, {})).kind, SplitOrigin::Framework);
  const auto balanced = counts({"software.pipeline_split=balanced"});
  EXPECT_LT(balanced.back(), 8);
  EXPECT_EQ(split_origin(load_plan(llama, {"software.pipeline_split=balanced"})).refusal, "");
  EXPECT_EQ(counts({"software.pipeline_split=torchtitan"}), (std::vector<int64_t>{8, 9, 8, 7}));
  EXPECT_EQ(counts({"parallel.stage_layers=[5,9,9,9]"}), (std::vector<int64_t>{5, 9, 9, 9}));
  EXPECT_EQ(split_origin(load_plan(llama, {"parallel.stage_layers=[5,9,9,9]"})).kind, SplitOrigin::Given);
  const Plan odd = load_plan(llama, {"model.num_hidden_layers=30"});
  const SplitOrigin refused = split_origin(odd);
  EXPECT_EQ(refused.kind, SplitOrigin::Balanced);
  EXPECT_NE(refused.refusal.find("30 layers do not divide evenly over 4 stages"), std::string::npos) << refused.refusal;
  EXPECT_NE(refused.refusal.find("parallel.stage_layers"), std::string::npos);
  int64_t placed = 0;
  for (const StageLayers& s : partition_layers(odd)) placed += s.count;
  EXPECT_EQ(placed, 30);
}

}  // namespace
}  // namespace stepsim
