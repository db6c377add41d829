// Megatron-LM's three overlap options, each against a closed form worked out here by hand on a
// plan small enough to follow op by op. Both plans are Llama-3.1-8B layers (FACTS / its HF
// config.json: hidden 4096, intermediate 14336, 32 query and 8 KV heads of 128, BF16 as every
// non-DeepSeek model trains by default) on the h800 preset at speed of light: BF16 GEMMs at
// 757.7 TFLOP/s, NVLink 160 GB/s, IB 50 GB/s, 132 SMs, no latency. The replay, the roofline's
// closed forms and the step they change are each checked against the same hand figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/roofline/roofline.hpp"
#include "workloads/cost/compute_breakdown.hpp"
#include "tests/simulator/sim_test_util.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim::test {
namespace {

using ops::OpKind;

constexpr double kHidden = 4096, kIntermediate = 14336, kKv = 8 * 128, kSeq = 8192;
constexpr double kBf16 = 757.7e12, kNvlink = 160e9, kIb = 50e9;

std::string llama8b() { return std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml"; }

SimResult run(const Plan& plan, bool spans = false) {
  SimOptions o;
  o.quiet = true;
  o.record_spans = spans;
  return in_child([&] { return simulate(plan, o); });
}

// ---- parallel.tp_comm_overlap ---------------------------------------------------------------
// One layer, TP 2 on one node, one 8192-token sequence. Every TP collective moves half the
// [8192, 4096] BF16 activations over NVLink: c = 1/2 x 8192 x 4096 x 2 B / 160 GB/s = 0.2097 ms.
// GEMMs per GPU (2 FLOPs per weight and token, half the weights on each GPU):
//   attention q, k, v (column-parallel): (4096 + 2 x 1024) x 4096 weights -> 0.272 ms
//   attention output (row-parallel):      4096 x 4096                      -> 0.181 ms
//   MLP gate and up (column-parallel):    2 x 4096 x 14336                 -> 1.270 ms
//   MLP down (row-parallel):              4096 x 14336                     -> 0.635 ms
// Off: the forward all-gather before each block and reduce-scatter after it stall the compute
// stream: 4c. The backward ones (the output gradient's all-gather behind the other block's
// reduce-scatter) move while the previous weight gradient computes, which outlasts both: hidden.
// On (Transformer Engine's userbuffers defaults): the all-gather is a ring exchange over tp = 2
// chunks, the GEMM on the local half first: g/2 + max(g/2, c) from start to end; the row-parallel
// GEMM runs in 4 splits on 132 - 16 SMs (g' = g x 132/116), each split reduce-scattered while the
// next computes: g'/4 + 3 max(g'/4, c/4) + c/4. The attention's GEMMs are too short to hide the
// ring (g/2 = 0.136 ms < c) and their split (g'/4 = 0.0516 ms < c/4 = 0.0524 ms); the MLP's are not.
struct TpCase {
  double c = 0;
  double g_attn_col = 0, g_attn_row = 0, g_mlp_col = 0, g_mlp_row = 0;
  double stretch = 132.0 / 116.0;
  TpCase() {
    c = 0.5 * kSeq * kHidden * 2 / kNvlink;
    const auto gemm = [](double weights) { return 2 * weights * kSeq / 2 / kBf16; };
    g_attn_col = gemm((kHidden + 2 * kKv) * kHidden);
    g_attn_row = gemm(kHidden * kHidden);
    g_mlp_col = gemm(2 * kHidden * kIntermediate);
    g_mlp_row = gemm(kHidden * kIntermediate);
  }
  double ring(double g) const { return g / 2 + std::max(g / 2, c) - g; }  // exposed beside g
  double split(double g) const {
    const double gs = g * stretch;
    return gs / 4 + 3 * std::max(gs / 4, c / 4) + c / 4 - gs;
  }
  double exposed_off() const { return 4 * c; }
  double exposed_on() const { return ring(g_attn_col) + split(g_attn_row) + ring(g_mlp_col) + split(g_mlp_row); }
  double sm_margin() const { return (stretch - 1) * (g_attn_row + g_mlp_row); }
};

Plan tp_plan(bool overlap) {
  // At speed of light, the GEMM times the hand figures use (the predicted model runs the pieces at
  // their own shapes' efficiencies).
  return load_plan(llama8b(), {"model.num_hidden_layers=1", "cluster.nodes=1", "cluster.gpus_per_node=2",
                               "parallel.pp=1", "parallel.tp=2", "train.global_batch=1", "parallel.microbatches=1",
                               std::string("parallel.tp_comm_overlap=") + (overlap ? "true" : "false"),
                               "sim.compute=speed-of-light"});
}

TEST(MegatronOverlap, TpCommOverlapPipelinesEachCollectiveWithItsGemm) {
  const TpCase k;
  // The premises the hand figures rest on: the attention's chunks are comm-bound, the MLP's not.
  ASSERT_LT(k.g_attn_col / 2, k.c);
  ASSERT_LT(k.g_attn_row * k.stretch / 4, k.c / 4);
  ASSERT_GT(k.g_mlp_col / 2, k.c);
  ASSERT_GT(k.g_mlp_row * k.stretch / 4, k.c / 4);
  const SimResult off = run(tp_plan(false)), on = run(tp_plan(true));
  ASSERT_EQ(off.ranks.size(), 2u);
  ASSERT_EQ(on.ranks.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(off.ranks[i].exposed_s[ops::CommClass::Tp], k.exposed_off(), 1e-9 * k.exposed_off()) << "gpu " << i;
    EXPECT_NEAR(on.ranks[i].exposed_s[ops::CommClass::Tp], k.exposed_on(), 1e-9 * k.exposed_off()) << "gpu " << i;
    // The same bytes move either way; the split GEMMs give up 16 SMs.
    EXPECT_NEAR(on.ranks[i].comm_s[ops::CommClass::Tp], off.ranks[i].comm_s[ops::CommClass::Tp], 1e-9 * off.ranks[i].comm_s[ops::CommClass::Tp]);
    EXPECT_NEAR(on.ranks[i].compute_s - off.ranks[i].compute_s, k.sm_margin(), 1e-9 * on.ranks[i].compute_s);
  }
  EXPECT_NEAR(off.step_time_s - on.step_time_s, k.exposed_off() - k.exposed_on() - k.sm_margin(),
              1e-9 * off.step_time_s);
  expect_exact_split(on);
}

// The compute breakdown charges the SM margin as the replay does: the row-parallel GEMMs' hand
// figure (132/116 - 1) x (attention output + MLP down), inside its GEMM class (it counted none).
TEST(MegatronOverlap, BreakdownChargesTheSmMarginOfTheHandFigure) {
  const TpCase k;
  const cost::ComputeBreakdown off = cost::compute_breakdown(tp_plan(false), 0), on = cost::compute_breakdown(tp_plan(true), 0);
  EXPECT_DOUBLE_EQ(off.ub_sm_margin_s, 0);
  EXPECT_NEAR(on.ub_sm_margin_s, k.sm_margin(), 1e-9 * k.sm_margin());
  EXPECT_NEAR(on.step.gemm - off.step.gemm, k.sm_margin(), 1e-9 * k.sm_margin());
}

TEST(MegatronOverlap, RooflineTpClosedFormsEqualTheHandFigures) {
  const TpCase k;
  for (const bool overlap : {false, true}) {
    const Roofline r = compute_roofline(tp_plan(overlap));
    EXPECT_NEAR(r.overlap.tp_exposed_off_s, k.exposed_off(), 1e-12);
    EXPECT_NEAR(r.overlap.tp_exposed_on_s, k.exposed_on(), 1e-12);
    EXPECT_NEAR(r.overlap.tp_sm_margin_s, k.sm_margin(), 1e-12);
    EXPECT_NEAR(r.overlap.exposed_s, overlap ? k.exposed_on() + k.sm_margin() : k.exposed_off(), 1e-12);
    EXPECT_NEAR(r.overlap.step_time_s, r.step_time_s + r.overlap.exposed_s, 1e-12);
  }
}

// The trace shows the pipelines: per forward block one ring-exchange all-gather beside the GEMM
// chunks it feeds, two split reduce-scatters (three splits, then the last), the compute in its
// three pieces; per backward block the re-gather of the input for the weight gradient.
TEST(MegatronOverlap, TpCommOverlapOpsNameTheirPieces) {
  const SimResult r = run(tp_plan(true), true);
  int ring = 0, split = 0, regather = 0, plain = 0, pieces[4] = {};
  for (const Span& s : r.spans) {
    if (s.rank != 0) continue;
    ring += s.tag.kind == OpKind::TpAllGatherRing;
    split += s.tag.kind == OpKind::TpReduceScatterSplit;
    regather += s.tag.kind == OpKind::TpAllGatherWgrad;
    plain += s.tag.kind == OpKind::TpAllGather;
    if (s.stream == 0 && s.tag.piece < 4) ++pieces[s.tag.piece];
  }
  EXPECT_EQ(ring, 2 + 2);  // forward input of 2 blocks, backward output gradient of 2
  EXPECT_EQ(split, 2 * 2);
  EXPECT_EQ(regather, 2);
  EXPECT_EQ(plain, 0);
  EXPECT_EQ(pieces[1], 4);  // each ring's GEMM chunks
  EXPECT_EQ(pieces[2], 4);
  EXPECT_EQ(pieces[3], 2);  // the forward split GEMMs
}

// TP 1: nothing to overlap, as Megatron-Core r0.8 accepted --tp-comm-overlap there (the published
// table's TP-1 row ran with it): the same step.
TEST(MegatronOverlap, TpCommOverlapWithoutTpChangesNothing) {
  const auto plan = [](bool overlap) {
    return load_plan(llama8b(), {"model.num_hidden_layers=1", "cluster.nodes=1", "cluster.gpus_per_node=2",
                                 "parallel.pp=1", "train.global_batch=2", "parallel.microbatches=1",
                                 std::string("parallel.tp_comm_overlap=") + (overlap ? "true" : "false")});
  };
  EXPECT_DOUBLE_EQ(run(plan(false)).step_time_s, run(plan(true)).step_time_s);
}

// ---- parallel.overlap_grad_reduce and overlap_param_gather ----------------------------------
// Four layers and a 1024-word vocabulary, DP 2 over IB (two nodes of one GPU), two 8192-token
// sequences per GPU in two microbatches, ZeRO-1, under the config's per-op cost model (the compute
// it hides behind is longer than at speed of light; the exposed figures below do not depend on it). Parameters per GPU in backward order:
//   LM head + final norm  4096 x 1024 + 4096                                 =   4,198,400
//   layers 3, 2, 1        41,943,040 attention + 176,160,768 MLP + 8,192 norms = 218,112,000 each
//   layer 0 + embedding   218,112,000 + 4096 x 1024                          = 222,306,304
//   total P                                                                  = 880,840,704
// A reduce-scatter moves 1/2 of its FP32 gradients over IB, 4 B x 1/2 / 50 GB/s per parameter;
// an all-gather 1/2 of its BF16 parameters, 2 B x 1/2 / 50 GB/s.
// Off: the whole reduce-scatter after the last backward, the whole all-gather after it: both exposed.
// Buckets of 440,000,000 from the end: [0, 440M) ends inside layer 2; [440M, 880M) and the
// 840,704 left over both hold parameters of layer 0 + embedding ([658,534,400, P)).
// overlap_grad_reduce: the first bucket is reduced once layer 2's backward (of the last microbatch)
// is done, behind layers 1 and 0's backward (about 22 ms of compute against 17.6 ms); the other
// two only after layer 0's: exposed P - 440M = 440,840,704 parameters' worth.
// overlap_param_gather: the step starts gathering the last bucket, then the middle one; layer 0
// needs both, so they are exposed; the first bucket is dispatched as layer 0 starts and moves
// while layers 0 and 1 compute: exposed the same 440,840,704 parameters' worth.
constexpr double kParams = 880840704, kTail = 880840704 - 440000000.0;
double reduce_s(double params) { return params * 4 * 0.5 / kIb; }
double gather_s(double params) { return params * 2 * 0.5 / kIb; }

Plan dp_plan(bool grad, bool param) {
  std::vector<std::string> sets = {"model.num_hidden_layers=4", "model.vocab_size=1024", "cluster.nodes=2",
                                   "cluster.gpus_per_node=1", "parallel.pp=1", "train.global_batch=4",
                                   "parallel.microbatches=2"};
  if (grad) sets.insert(sets.end(), {"parallel.overlap_grad_reduce=true", "parallel.ddp_bucket_size=440000000"});
  if (param) sets.push_back("parallel.overlap_param_gather=true");
  return load_plan(llama8b(), sets);
}

TEST(MegatronOverlap, GradReduceAndParamGatherHideAllButTheFirstLayersBuckets) {
  const SimResult off = run(dp_plan(false, false), true), grad = run(dp_plan(true, false), true),
                  both = run(dp_plan(true, true), true);
  // Reduced replay: replica 0 is simulated, its DP peer mirrored (exact under balanced loads).
  for (const SimResult* r : {&grad, &both}) ASSERT_EQ(r->ranks.size(), off.ranks.size());
  ASSERT_FALSE(off.ranks.empty());
  for (size_t i = 0; i < off.ranks.size(); ++i) {
    EXPECT_NEAR(off.ranks[i].exposed_s[ops::CommClass::Dp], reduce_s(kParams) + gather_s(kParams), 1e-9) << "gpu " << i;
    EXPECT_NEAR(grad.ranks[i].exposed_s[ops::CommClass::Dp], reduce_s(kTail) + gather_s(kParams), 1e-9) << "gpu " << i;
    EXPECT_NEAR(both.ranks[i].exposed_s[ops::CommClass::Dp], reduce_s(kTail) + gather_s(kTail), 1e-9) << "gpu " << i;
    EXPECT_NEAR(both.ranks[i].compute_s, off.ranks[i].compute_s, 1e-12);
  }
  EXPECT_NEAR(off.step_time_s - grad.step_time_s, reduce_s(kParams - kTail), 1e-9);
  EXPECT_NEAR(grad.step_time_s - both.step_time_s, gather_s(kParams - kTail), 1e-9);
  // Three buckets, reduced during the last microbatch only (Megatron's no_sync for the others);
  // off: one reduce-scatter of everything. The gathers: one after the step, or three ahead of it.
  const auto count = [](const SimResult& r, OpKind kind) {
    return std::count_if(r.spans.begin(), r.spans.end(), [&](const Span& s) { return s.rank == 0 && s.tag.kind == kind; });
  };
  EXPECT_EQ(count(off, OpKind::DpReduceScatter), 1);
  EXPECT_EQ(count(grad, OpKind::DpReduceScatter), 3);
  EXPECT_EQ(count(grad, OpKind::DpAllGather), 1);
  EXPECT_EQ(count(both, OpKind::DpAllGather), 3);
  // The config's per-op cost model (sim.compute: predicted) runs the sharded optimizer step once
  // per step whether or not the gathers moved ahead of the forward (the compute_s equality above
  // holds only if it does).
  EXPECT_EQ(count(off, OpKind::Optimizer), 1);
  EXPECT_EQ(count(grad, OpKind::Optimizer), 1);
  EXPECT_EQ(count(both, OpKind::Optimizer), 1);
  expect_exact_split(both);
}

// overlap_param_gather without overlap_grad_reduce, as Megatron-Bridge's recipes may set it:
// Megatron-Core's DDP then keeps the chunk in one bucket, so the step's gather, dispatched before the
// first forward, holds layer 0's parameters and is all exposed, as the gather after the step is
// without the option: the same reduce_s(P) + gather_s(P), one gather, and the roofline's closed
// form says so too.
TEST(MegatronOverlap, ParamGatherAloneGathersTheChunkAsOneBucket) {
  const SimResult off = run(dp_plan(false, false), true), param = run(dp_plan(false, true), true);
  ASSERT_EQ(param.ranks.size(), off.ranks.size());
  for (size_t i = 0; i < param.ranks.size(); ++i)
    EXPECT_NEAR(param.ranks[i].exposed_s[ops::CommClass::Dp], reduce_s(kParams) + gather_s(kParams), 1e-9) << "gpu " << i;
  EXPECT_EQ(std::count_if(param.spans.begin(), param.spans.end(),
                          [](const Span& s) { return s.rank == 0 && s.tag.kind == OpKind::DpAllGather; }),
            1);
  const Roofline r = compute_roofline(dp_plan(false, true));
  EXPECT_NEAR(r.overlap.dp_gather_exposed_on_s, gather_s(kParams), 1e-12);
  EXPECT_NEAR(r.overlap.exposed_s, reduce_s(kParams) + gather_s(kParams), 1e-12);
}

TEST(MegatronOverlap, RooflineDpClosedFormsEqualTheHandFigures) {
  const Roofline r = compute_roofline(dp_plan(true, true));
  EXPECT_NEAR(r.overlap.dp_reduce_exposed_off_s, reduce_s(kParams), 1e-12);
  EXPECT_NEAR(r.overlap.dp_reduce_exposed_on_s, reduce_s(kTail), 1e-12);
  EXPECT_NEAR(r.overlap.dp_gather_exposed_off_s, gather_s(kParams), 1e-12);
  EXPECT_NEAR(r.overlap.dp_gather_exposed_on_s, gather_s(kTail), 1e-12);
  EXPECT_DOUBLE_EQ(r.overlap.buckets, 3);
  EXPECT_NEAR(r.overlap.exposed_s, reduce_s(kTail) + gather_s(kTail), 1e-12);
}

// Megatron closes a bucket only between parameter tensors, so none is smaller than a tensor: with
// parallel.ddp_bucket_size 100 (or 1) the buckets are those of the smallest weight Llama 3.1 8B's
// layers hold, the attention output projection (4096 x 4096 = 16,777,216; Q, K and V are one fused
// 25,165,824 tensor, the MLP's down projection 58,720,256): P / 16,777,216 = 52.5, so 53 buckets,
// the same step as ddp_bucket_size=16777216. It was one bucket per 100 parameters: "internal
// error: op has too many dependencies" (the optimizer step waited on each), and 1 exhausted memory.
TEST(MegatronOverlap, BucketsSmallerThanATensorAreATensorsWorth) {
  const auto plan = [](const std::string& size) {
    return load_plan(llama8b(), {"model.num_hidden_layers=4", "model.vocab_size=1024", "cluster.nodes=2",
                                 "cluster.gpus_per_node=1", "parallel.pp=1", "train.global_batch=4",
                                 "parallel.microbatches=2", "parallel.overlap_grad_reduce=true",
                                 "parallel.overlap_param_gather=true", "parallel.ddp_bucket_size=" + size});
  };
  const SimResult tensor = run(plan("16777216"), true);
  const auto count = [](const SimResult& r, OpKind kind) {
    return std::count_if(r.spans.begin(), r.spans.end(), [&](const Span& s) { return s.rank == 0 && s.tag.kind == kind; });
  };
  EXPECT_EQ(count(tensor, OpKind::DpReduceScatter), 53);
  EXPECT_EQ(count(tensor, OpKind::DpAllGather), 53);
  for (const char* size : {"100", "1"}) {
    const Plan p = plan(size);
    EXPECT_DOUBLE_EQ(compute_roofline(p).overlap.bucket_params, 16777216) << size;
    const SimResult r = run(p, true);
    ASSERT_EQ(count(r, OpKind::DpReduceScatter), 53) << size;  // not on to 1 when 100 failed
    EXPECT_DOUBLE_EQ(r.step_time_s, tensor.step_time_s) << size;
  }
}

// Megatron-Core's default bucket: max(40M, 1M x data-parallel size) parameters.
TEST(MegatronOverlap, DefaultBucketIsMegatronsMaxOf40MAnd1MPerReplica) {
  const Roofline small = compute_roofline(load_plan(llama8b(), {"parallel.overlap_grad_reduce=true"}));
  EXPECT_DOUBLE_EQ(small.overlap.bucket_params, 40e6);  // DP 16
  const Roofline large = compute_roofline(
      load_plan(llama8b(), {"parallel.overlap_grad_reduce=true", "cluster.nodes=64", "train.global_batch=2048",
                            "parallel.microbatches=16"}));
  EXPECT_DOUBLE_EQ(large.overlap.bucket_params, 128e6);  // DP 128
}

// ---- memory ----------------------------------------------------------------------------------
// Userbuffers register ten [tokens, hidden] buffers (qkv, proj, fc1, fc2 forward; their input and
// weight gradients) for the microbatch's tokens: BF16, or FP8 for the six all-gather buffers.
// Megatron's buckets are views into the gradient and parameter buffers: nothing more.
double static_buffers(const Plan& plan) {
  const ModelWorkload w(plan);
  return w.memory_model()->static_memory(0).buffers_bytes;
}

TEST(MegatronOverlap, UserbuffersAreTheOnlyMemoryTheOptionsAdd) {
  EXPECT_NEAR(static_buffers(tp_plan(true)) - static_buffers(tp_plan(false)), 10 * kSeq * kHidden * 2, 1);
  const auto fp8 = [](bool overlap) {
    return load_plan(llama8b(), {"model.num_hidden_layers=1", "cluster.nodes=1", "cluster.gpus_per_node=2",
                                 "parallel.pp=1", "parallel.tp=2", "train.global_batch=1", "parallel.microbatches=1",
                                 "train.precision=fp8",
                                 std::string("parallel.tp_comm_overlap=") + (overlap ? "true" : "false")});
  };
  EXPECT_NEAR(static_buffers(fp8(true)) - static_buffers(fp8(false)), (6 * 1 + 4 * 2) * kSeq * kHidden, 1);
  const ModelWorkload off(dp_plan(false, false)), on(dp_plan(true, true));
  EXPECT_DOUBLE_EQ(off.memory_model()->static_memory(0).total(), on.memory_model()->static_memory(0).total());
}

}  // namespace
}  // namespace stepsim::test
