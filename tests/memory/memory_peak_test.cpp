// Memory along the replayed step against the seed series' part 2 (ezyang, "DeepSeek-V3: from
// roofline to reality", 02-hopper-memory, FACTS.md section 6): the expected bytes are computed here
// by hand from the model's dimensions and the part-2 accounting, never read from the program.
#include <gtest/gtest.h>

#include "tests/memory/memory_test_util.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/model/model_workload.hpp"
#include "workloads/memory/activation_bytes.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim::test {
namespace {

// DeepSeek-V3 (HF config.json) and the default plan, written out for the hand counts.
constexpr double h = 7168, q_lat = 1536, kv_lat = 512, nope = 128, rope = 64, vdim = 128, heads = 128;
constexpr double experts = 256, topk = 8, shared = 1, inter = 2048, dense_inter = 18432, vocab = 129280;
constexpr double seq = 4096, dp = 256, ep = 64, edp = dp / ep;
constexpr double fp8 = 1.0 + 4.0 / 128;  // FP8 value + one FP32 scale per 128 (1x128 tiles)

constexpr double attn_params = h * q_lat + h * (kv_lat + rope) + q_lat * heads * (nope + rope) +
                               kv_lat * heads * (nope + vdim) + heads * vdim * h;
constexpr double norm_params = 2 * h + q_lat + kv_lat;
constexpr double expert_params = 3 * h * inter;
constexpr double moe_non_expert = attn_params + norm_params + (experts * h + experts) + shared * expert_params;
constexpr double moe_routed_per_gpu = experts / ep * expert_params;

// Saved bytes per token of one MoE layer under DeepSeek's recompute (RMSNorms, MLA up-projections,
// SwiGLU rebuilt in backward) with FP8 stashes: layer input, pre-norm latents, attention output
// (E5M6, 1.5 B) and its log-sum-exp, residual, router state (FP32), dispatched tokens and gate/up
// outputs in FP8.
constexpr double moe_deepseek_per_token = 2 * h + 2 * (q_lat + kv_lat) + 1.5 * heads * vdim + 4 * heads + 2 * h +
                                          4 * (2 * experts + 4 * topk) + fp8 * topk * h +
                                          fp8 * (topk + shared) * 2 * inter;
// Without recompute the backward also keeps both RMSNorm outputs (FP8) with their rstds, the normed
// latents, q and k, v after RoPE (BF16) and the SwiGLU output.
constexpr double moe_none_per_token = moe_deepseek_per_token + 2 * (fp8 * h + 4) + fp8 * (q_lat + kv_lat) + 8 +
                                      2 * heads * (nope + rope) + 2 * heads * (nope + rope + vdim) +
                                      fp8 * (topk + shared) * inter;
constexpr double dense_deepseek_per_token = 2 * h + 2 * (q_lat + kv_lat) + 1.5 * heads * vdim + 4 * heads + 2 * h +
                                            fp8 * 2 * dense_inter;
constexpr double head_per_token = 6 * vocab;  // BF16 logits + FP32 softmax

struct PartTwo {
  double weights, grads, optimizer, activations;
  double total() const { return weights + grads + optimizer + activations; }
};

// The part-2 sheet's middle rank: 8 MoE layers, ZeRO-1 (non-experts over DP 256, experts over
// expert-DP 4), PP + 1/2 = 8.5 microbatches of one 4096-token sequence in flight.
PartTwo part_two_mid_rank(double per_token) {
  const double layers = 8;
  return {2 * layers * (moe_non_expert + moe_routed_per_gpu), 4 * layers * (moe_non_expert + moe_routed_per_gpu),
          8 * layers * (moe_non_expert / dp + moe_routed_per_gpu / edp), layers * 8.5 * seq * per_token};
}

// A pipeline rank of the default DualPipeV plan whose two stages hold 8 MoE layers and no head.
int64_t middle_rank_with_8_moe_layers(const Plan& plan) {
  const auto stages = partition_layers(plan);
  for (int64_t r = 1; r < plan.parallel.pp; ++r) {
    const StageLayers& a = stages[size_t(r)];
    const StageLayers& b = stages[size_t(2 * plan.parallel.pp - 1 - r)];
    if (a.count + b.count == 8 && a.first >= 3 && b.first >= 3 && !a.has_lm_head && !b.has_lm_head) return r;
  }
  return -1;
}

TEST(MemoryPeak, HandCountReproducesPartTwoSheet) {
  const PartTwo p = part_two_mid_rank(moe_deepseek_per_token);
  EXPECT_NEAR(p.weights, 6.55e9, 0.005e9);
  EXPECT_NEAR(p.grads, 13.09e9, 0.005e9);
  EXPECT_NEAR(p.optimizer, 2.88e9, 0.005e9);
  EXPECT_NEAR(p.activations, 43.78e9, 0.005e9);
  EXPECT_NEAR(p.total(), 66.30e9, 0.01e9);
  // Part 2's step before FP8 stashes (BF16 everywhere, attention output too): 87.5 GiB.
  const double bf16_per_token = 2 * h + 2 * (q_lat + kv_lat) + 2 * heads * vdim + 4 * heads + 2 * h +
                                4 * (2 * experts + 4 * topk) + 2 * topk * h + 2 * (topk + shared) * 2 * inter;
  EXPECT_NEAR(part_two_mid_rank(bf16_per_token).total() / kGiB, 87.5, 0.1);
}

// FACTS.md section 6, part 2's steps for PP8 DualPipeV (DeepEP buffers excluded, as there): no
// recompute and BF16 stashes 139.6 GiB, DeepSeek's recompute 87.5 GiB.
TEST(MemoryEstimate, RooflineEstimateFollowsPartTwoSteps) {
  const MemoryEstimate e = estimate_memory(plan_with({}));
  const PartTwo p = part_two_mid_rank(moe_deepseek_per_token);
  EXPECT_EQ(e.moe_layers, 8);
  EXPECT_EQ(e.in_flight_microbatches, 8.5);
  EXPECT_NEAR(e.fixed.weights_bytes, p.weights, 1e-9 * p.weights);
  EXPECT_NEAR(e.fixed.grads_bytes, p.grads, 1e-9 * p.grads);
  EXPECT_NEAR(e.fixed.optimizer_bytes, p.optimizer, 1e-9 * p.optimizer);
  EXPECT_NEAR(e.activations_bytes, p.activations, 1e-9 * p.activations);
  EXPECT_TRUE(e.fits);
  const auto without_buffers_gib = [](const MemoryEstimate& m) { return (m.total_bytes - m.fixed.buffers_bytes) / kGiB; };
  const MemoryEstimate bf16 = estimate_memory(plan_with({"parallel.fp8_stash=false"}));
  EXPECT_NEAR(without_buffers_gib(bf16), 87.5, 0.1);
  EXPECT_FALSE(bf16.fits);
  const MemoryEstimate none = estimate_memory(plan_with({"parallel.fp8_stash=false", "parallel.recompute=none"}));
  EXPECT_NEAR(without_buffers_gib(none), 139.6, 0.1);
}

TEST(MemoryPeak, DefaultPlanMiddleRankPeaksAtPartTwoEstimate) {
  const Plan plan = plan_with({});
  const int64_t rank = middle_rank_with_8_moe_layers(plan);
  ASSERT_GE(rank, 0) << "no pipeline rank of the default plan holds exactly 8 MoE layers";
  const MemoryRun run = simulate_memory(plan);
  ASSERT_TRUE(run.has_memory);
  const RankMemory& m = run.gpu(rank * int64_t(dp)).memory;
  const PartTwo p = part_two_mid_rank(moe_deepseek_per_token);
  // Static parts are exact; the DeepEP buffers (send + receive of one microbatch's token copies,
  // FP8 dispatch + BF16 combine) come on top.
  EXPECT_NEAR(m.weights_bytes, p.weights, 1e-9 * p.weights);
  EXPECT_NEAR(m.grads_bytes, p.grads, 1e-9 * p.grads);
  EXPECT_NEAR(m.optimizer_bytes, p.optimizer, 1e-9 * p.optimizer);
  EXPECT_NEAR(m.buffers_bytes, seq * topk * ((h + h / 128 * 4) + 2 * h), 1.0);
  // The schedule decides the activations: DualPipeV holds PP + 1/2 microbatches at most, the
  // peak moment may catch part of a chunk freed.
  EXPECT_LE(m.activations_bytes, p.activations * (1 + 1e-9));
  EXPECT_GE(m.activations_bytes, p.activations * 0.9);
  EXPECT_NEAR(m.peak_bytes, 66.3e9, 0.05 * 66.3e9);
  EXPECT_LE(m.peak_bytes, 80 * kGiB);
  EXPECT_GT(m.peak_t_s, 0);
}

TEST(MemoryPeak, DefaultPlanWithoutRecomputeDoesNotFit) {
  const Plan plan = plan_with({"parallel.recompute=none"});
  const int64_t rank = middle_rank_with_8_moe_layers(plan);
  ASSERT_GE(rank, 0);
  const MemoryRun run = simulate_memory(plan);
  const PartTwo p = part_two_mid_rank(moe_none_per_token);
  EXPECT_GT(p.total(), 80 * kGiB);  // by hand already
  const RankMemory& m = run.gpu(rank * int64_t(dp)).memory;
  EXPECT_NEAR(m.peak_bytes, p.total(), 0.05 * p.total());
  EXPECT_GT(m.peak_bytes, 80 * kGiB);
}

// FSDP: every GPU runs its microbatches one after the other through all 61 layers and the head, so
// one microbatch of the GPU's batch is live at the peak (15360 sequences over 2048 GPUs: GPU 1
// holds 8). Part 3: only 8 microbatches fit.
double fsdp_activations_per_sequence() {
  return seq * (58 * moe_deepseek_per_token + 3 * dense_deepseek_per_token + head_per_token);
}

Plan fsdp_plan(int microbatches) {
  return plan_with({"schedule=fsdp", "parallel.split_lone_chunks=false", "parallel.pp=1", "parallel.zero=3",
                    "parallel.microbatches=" + std::to_string(microbatches)});
}

TEST(MemoryPeak, FsdpFitsAtEightMicrobatches) {
  const double per_seq = fsdp_activations_per_sequence();
  const MemoryRun run = simulate_memory(fsdp_plan(8));
  EXPECT_NEAR(run.gpu(1).memory.activations_bytes, 1 * per_seq, 1e-6 * per_seq);
  EXPECT_LE(run.max_peak(), 80 * kGiB);
  // ZeRO-3 shards weights, gradients and optimizer state over every GPU (experts over expert-DP 32).
  const double non_expert_total = 58 * moe_non_expert + 3 * (attn_params + norm_params + 3 * h * dense_inter) +
                                  2 * vocab * h + h;
  const double shard = non_expert_total / 2048 + 58 * moe_routed_per_gpu / (2048 / ep);
  EXPECT_NEAR(run.gpu(1).memory.weights_bytes, 2 * shard, 1e-6 * 2 * shard);
  EXPECT_NEAR(run.gpu(1).memory.grads_bytes, 4 * shard, 1e-6 * 4 * shard);
  EXPECT_NEAR(run.gpu(1).memory.optimizer_bytes, 8 * shard, 1e-6 * 8 * shard);
  // Staging: the largest unit (layer 0 with the embedding) gathered twice in BF16 plus its FP32
  // gradients, and the DeepEP buffers of one sequence.
  const double unit = attn_params + norm_params + 3 * h * dense_inter + vocab * h;
  const double buffers = 2 * 2 * unit + 4 * unit + seq * topk * ((h + h / 128 * 4) + 2 * h);
  EXPECT_NEAR(run.gpu(1).memory.buffers_bytes, buffers, 1e-6 * buffers);
}

TEST(MemoryPeak, FsdpDoesNotFitAtFourMicrobatches) {
  const double per_seq = fsdp_activations_per_sequence();
  // Four microbatches: two sequences each; their activations alone nearly fill the GPU.
  EXPECT_GT(2 * per_seq, 0.9 * 80 * kGiB);
  const MemoryRun run = simulate_memory(fsdp_plan(4));
  EXPECT_NEAR(run.gpu(1).memory.activations_bytes, 2 * per_seq, 1e-6 * per_seq);
  EXPECT_GT(run.max_peak(), 80 * kGiB);
}

// 1F1B: stage s keeps PP - s microbatches in flight; the last stage also the LM head's logits of one.
TEST(MemoryPeak, OneFOneBKeepsPipelineDepthMicrobatchesOnTheFirstStage) {
  // FP8 GEMMs and stashes as DeepSeek trains (Llama's own default is BF16).
  const Plan plan = plan_with({"train.precision=fp8", "parallel.recompute=deepseek", "parallel.microbatches=16"},
                              std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml");
  // Llama 3.1 8B: hidden 4096, 32 heads, 8 KV heads of 128, FFN 14336, vocabulary 128256; 2
  // sequences of 8192 tokens per microbatch; DeepSeek's recompute: layer input, q, k, v (no
  // up-projection to rebuild them from), attention output (E5M6) + LSE, residual, gate/up (FP8).
  const double lh = 4096, lheads = 32, kvh = 8, hd = 128, linter = 14336, tokens = 2 * 8192;
  const double per_token = 2 * lh + 2 * (lheads * hd + kvh * 2 * hd) + 1.5 * lheads * hd + 4 * lheads + 2 * lh +
                           fp8 * 2 * linter;
  const auto stages = partition_layers(plan);
  const MemoryRun run = simulate_memory(plan);
  const double first = 4 * tokens * double(stages[0].count) * per_token;
  EXPECT_NEAR(run.gpu(0).memory.activations_bytes, first, 1e-9 * first);
  const int64_t last_gpu = 3 * plan.dp();
  const double last = tokens * (double(stages[3].count) * per_token + 6 * 128256);
  EXPECT_NEAR(run.gpu(last_gpu).memory.activations_bytes, last, 1e-9 * last);
}

// ZB-H1 at 1F1B's activation memory (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism":
// ZB-H1 keeps 1F1B's peak). Its deferred weight gradients keep what W needs until then: for the
// LM head, its input and output gradient (2 x hidden + 2 x vocabulary bytes per token), not its
// logits and FP32 softmax (6 x vocabulary), which once kept ~8 microbatches of them on the last
// stage (71.5 GB against 1F1B's 66.1 GB on this plan).
TEST(MemoryPeak, ZbH1PeaksAtOneFOneBsMemoryWithTheHeadKeepingOnlyWhatWNeeds) {
  const MemoryRun zb = simulate_memory(plan_with({"schedule=zb-h1"}));
  const MemoryRun one = simulate_memory(plan_with({"schedule=1f1b"}));
  EXPECT_DOUBLE_EQ(zb.max_peak(), one.max_peak());
  // The head's allocations, per 4096-token sequence (one per microbatch), TP 1.
  const Plan plan = plan_with({"schedule=zb-h1"});
  const ModelWorkload w(plan);
  ops::Tag t;
  t.kind = ops::OpKind::Head;
  t.microbatch = 3;
  ops::ActivationEvent f[ops::kMaxActivationEvents], b[ops::kMaxActivationEvents],
      wg[ops::kMaxActivationEvents];
  t.phase = ops::Phase::Forward;
  ASSERT_EQ(w.memory_model()->activation_events(0, t, f), 2);
  t.phase = ops::Phase::Backward;
  ASSERT_EQ(w.memory_model()->activation_events(0, t, b), 1);
  t.phase = ops::Phase::Weight;
  ASSERT_GE(w.memory_model()->activation_events(0, t, wg), 1);
  EXPECT_DOUBLE_EQ(f[0].bytes, seq * (2 * vocab + 2 * h));             // kept to W
  EXPECT_DOUBLE_EQ(f[0].bytes + f[1].bytes, seq * head_per_token);     // all of it from F to B
  EXPECT_FALSE(b[0].allocate);
  EXPECT_EQ(b[0].key, f[1].key);   // B frees the logits and softmax
  EXPECT_FALSE(wg[0].allocate);
  EXPECT_EQ(wg[0].key, f[0].key);  // W frees the rest
}

TEST(MemoryPeak, SyntheticWorkloadHasNoMemoryModel) {
  const Plan plan = plan_with({"workload.kind=synthetic", "schedule=1f1b", "parallel.pp=4", "parallel.microbatches=8"});
  const MemoryRun run = simulate_memory(plan);
  EXPECT_FALSE(run.has_memory);
  for (const RankPeak& r : run.ranks) EXPECT_EQ(r.memory.peak_bytes, 0);
}

TEST(StateBytes, MegatronsDistributedOptimizerHolds6Plus12OverDBytesPerParameter) {
  // Megatron-LM's docs/distrib_optimizer.md (core_r0.8.0): BF16 parameters with FP32 gradients hold
  // 6 + 12/d bytes per parameter under the distributed optimizer (d: data-parallel size): 2 (weight)
  // + 4 (gradient) + (4 master + 4 + 4 Adam moments) / d. The 1.7B GPT of Megatron's table: d = 48.
  const auto path = std::string(STEPSIM_SOURCE_DIR) + "/workloads/megatron/gpt-1.7b.yaml";
  const auto state_per_param = [](const Plan& p) {
    const ops::StaticMemory f = estimate_memory(p).fixed;
    return (f.weights_bytes + f.grads_bytes + f.optimizer_bytes) / (f.weights_bytes / 2);
  };
  const Plan megatron = load_plan(path);
  EXPECT_EQ(megatron.train.adam_moments_dtype, MomentDtype::FP32);
  EXPECT_NEAR(state_per_param(megatron), 6 + 12.0 / 48, 1e-12);
  // BF16 moments (DeepSeek-V3, report 3.3.4): 4 + 2 + 2 bytes of state per shard parameter.
  EXPECT_NEAR(state_per_param(load_plan(path, {"train.adam_moments_dtype=bf16"})), 6 + 8.0 / 48, 1e-12);
  // An MLA model defaults to DeepSeek's BF16 moments; a config may say otherwise.
  const auto deepseek = std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-v3.yaml";
  EXPECT_EQ(load_plan(deepseek).train.adam_moments_dtype, MomentDtype::BF16);
  EXPECT_EQ(load_plan(deepseek, {"train.adam_moments_dtype=fp32"}).train.adam_moments_dtype, MomentDtype::FP32);
}

// --grad-reduce-in-bf16 keeps Megatron's main_grad buffer in BF16: 2 bytes per held parameter
// instead of 4 (the same 1.7B plan: 4 + 12/d bytes per parameter of state).
TEST(StateBytes, BF16GradientReductionsHalveTheGradientBuffer) {
  const auto path = std::string(STEPSIM_SOURCE_DIR) + "/workloads/megatron/gpt-1.7b.yaml";
  const ops::StaticMemory fp32 = estimate_memory(load_plan(path)).fixed;
  const ops::StaticMemory bf16 = estimate_memory(load_plan(path, {"parallel.grad_reduce_dtype=bf16"})).fixed;
  EXPECT_NEAR(fp32.grads_bytes / (fp32.weights_bytes / 2), 4.0, 1e-12);
  EXPECT_NEAR(bf16.grads_bytes / (bf16.weights_bytes / 2), 2.0, 1e-12);
  EXPECT_EQ(bf16.optimizer_bytes, fp32.optimizer_bytes);
}

// torchtitan's per-op checkpointing of a Llama 3.1 8B block keeps, per token: the input (4096),
// wq's output (32 x 128), wv's (8 x 128), the attention output (4096) in BF16 and its log-sum-exp
// (32 x FP32), w1's output (14336) and w2's (4096): 2 x 31744 + 128 = 63616 bytes.
TEST(ActivationBytes, TorchtitansPerOpCheckpointingKeepsWhatItsSaveListSays) {
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                           {"parallel.recompute=torchtitan-op", "train.precision=bf16"});
  const LayerActivations a = layer_activations(p, false);
  EXPECT_DOUBLE_EQ(a.saved_per_token, 2.0 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4.0 * 32);
  // What it rebuilds is what no recompute would keep, less what it saved.
  const Plan none = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", {"train.precision=bf16"});
  EXPECT_DOUBLE_EQ(a.saved_per_token + a.recompute_per_token, layer_activations(none, false).saved_per_token);
}

// With torchao's float8 linears every GEMM is torch._scaled_mm, not in the save list: the block keeps
// its input (4096) and the attention output (4096) in BF16 and the log-sum-exp (32 x FP32) only:
// 2 x 8192 + 128 = 16512 bytes per token.
TEST(ActivationBytes, PerOpCheckpointingOfFloat8LinearsKeepsOnlyTheAttentionOutput) {
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                           {"parallel.recompute=torchtitan-op", "train.precision=fp8", "parallel.fp8_stash=false"});
  EXPECT_DOUBLE_EQ(layer_activations(p, false).saved_per_token, 2.0 * (4096 + 4096) + 4.0 * 32);
}

}  // namespace
}  // namespace stepsim::test
