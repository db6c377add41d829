#include "workloads/layers/layer_work.hpp"

#include <tuple>

#include "vocabulary/layer_spec.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/layers/layer_memory.hpp"
#include "workloads/layers/op_sac.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"

namespace stepsim {

std::string_view to_string(LayerPart p) {
  static constexpr std::string_view names[] = {"attn_F", "mlp_F", "mlp_B", "attn_B", "mlp_W", "attn_W"};
  return names[int(p)];
}

double PartWork::flops(Precision p) const {
  double sum = 0;
  for (const auto& k : kernels)
    if (k.precision == p) sum += k.flops;
  return sum;
}

double PartWork::seconds(const HardwareConfig& hw) const {
  return flops(Precision::FP8) / (hw.fp8_tflops * 1e12) + flops(Precision::BF16) / (hw.bf16_tflops * 1e12) +
         nonmatmul_s;
}

namespace {

using namespace layer_memory;

// Forward GEMM FLOPs of `params` weights over `rows` rows: one multiply-add per weight per row.
double gemm(double params, double rows) { return 2.0 * params * rows; }

// Kernel names are string_views into static storage: the recomputed copy of each forward kernel.
std::string_view recomputed_name(std::string_view forward) {
  static constexpr std::pair<std::string_view, std::string_view> names[] = {
      {"q_down", "recompute_q_down"},         {"kv_down", "recompute_kv_down"},
      {"q_up", "recompute_q_up"},             {"kv_up", "recompute_kv_up"},
      {"attn_out", "recompute_attn_out"},     {"attention_core", "recompute_attention_core"},
      {"router", "recompute_router"},         {"shared_experts", "recompute_shared_experts"},
      {"routed_experts", "recompute_routed_experts"}, {"dense_ffn", "recompute_dense_ffn"}};
  for (const auto& [f, r] : names)
    if (f == forward) return r;
  return "recompute";
}

Kernel kernel(std::string_view name, double flops, Precision p, KernelClass cls = KernelClass::Gemm,
              KernelPass pass = KernelPass::Forward) {
  Kernel k;
  k.name = name;
  k.flops = flops;
  k.precision = p;
  k.cls = cls;
  k.pass = pass;
  return k;
}

// A GEMM kernel of one or two matrices.
Kernel gemm_kernel(std::string_view name, double flops, Precision p, KernelPass pass, GemmShape a,
                   GemmShape b = {}) {
  Kernel k = kernel(name, flops, p, KernelClass::Gemm, pass);
  k.gemm[0] = a;
  k.gemm[1] = b;
  k.gemms = b.n > 0 ? 2 : 1;
  return k;
}

// The backward's copy of the forward work it reruns: `from`'s kernels and memory-bound ops that
// `kernel` and `memory` pick, the kernels named as recomputed.
template <class KernelPick, class MemoryPick>
void rerun(PartWork& into, const PartWork& from, KernelPick kernel, MemoryPick memory) {
  for (const Kernel& k : from.kernels) {
    if (!kernel(k)) continue;
    Kernel r = k;
    r.name = recomputed_name(k.name);
    r.pass = KernelPass::Forward;
    into.kernels.push_back(r);
  }
  for (const MemoryOp& op : from.memory)
    if (memory(op)) into.memory.push_back(op);
}

}  // namespace

MoePythonCalls moe_python_calls(const Plan& plan) {
  MoePythonCalls c;
  const RankLayout layout(plan);
  // The routing counts' all-reduce over the attention's TP x CP (the auxiliary loss's, which the
  // Qwen3 recipes run); without FP8 the grouped linears quantise nothing (2 split casts each way).
  const double router = layout.tp() * layout.cp() > 1 ? 1 : 0;
  const double casts = plan.train.precision == Precision::FP8 ? 0 : 2;
  c.forward += router - casts;
  c.backward -= casts;
  // An FP32 router's backward casts its input and weight to FP32 and the two gradients back
  // (moe_utils.py's RouterGatingLinearFunction): four calls more, whatever the dispatcher.
  const bool fp32_router = plan.parallel.moe_router_dtype == RouterDtype::FP32;
  if (fp32_router) c.backward += 4;
  if (plan.parallel.moe_dispatcher == MoeDispatcher::AllGather) {
    // Its combine casts the expert outputs to the probabilities' dtype around the reduce-scatter
    // (token_dispatcher.py's token_combine): with an FP32 router, two casts each way.
    if (fp32_router) c.forward += 2, c.backward += 2;
    return c;
  }
  if (plan.parallel.moe_dispatcher == MoeDispatcher::DeepEP) {
    // The flex dispatcher casts the router's probabilities to FP32 (token_dispatcher.py, and the
    // cast's gradient back); an FP32 router's already are, and the cast is no call.
    if (fp32_router) c.forward -= 1, c.backward -= 1;
    // The basis is HybridEP's: one call for its dispatch (and permute), one for its unpermute and
    // combine, each way. DeepEP's path as Megatron-Core 0.14 runs it with the fused multi-hot map
    // (docs/megatron-mla-audit.md, section 2.4) calls from Python the top-k back to indices, the
    // dispatch layout, the dispatch, the multi-hot map, three row-id-map passes and the permute,
    // the unpermute and the combine: 10 forward; the cached dispatch, the two permutes' gradients,
    // the map's, the combine's and the top-k's autograd node backward: 6; against HybridEP's 2 and 2.
    if (plan.parallel.moe_flex_backend == FlexBackend::DeepEP) c.forward += 10 - 2, c.backward += 6 - 2;
    return c;
  }
  const layer_memory::MemoryShape s = layer_memory::memory_shape(plan, 1, true);
  const bool ep = layout.ep() > 1;
  const double sorts = s.sort_rows ? 2 : 0;
  const double padded = plan.train.precision == Precision::FP8 ? 3 : 0;  // Fp8Padding x 2, Fp8Unpadding
  // Forward: less the flex dispatcher's probabilities' cast and its dispatch and combine calls (3);
  // plus the alltoall dispatcher's counting ops, copies and maps (software.alltoall_dispatch_launches,
  // each a call), its fused permute and unpermute, the tokens' and the combine's all-to-alls, the
  // two chunk sorts, and the experts' FP8 paddings.
  c.forward += -3 + 2 + double(s.alltoall_launches) + (ep ? 2 : 0) + sorts + padded;
  // Backward: less the flex's probabilities' cast and two bundles (3); plus the permute's and
  // unpermute's gradients, the three all-to-alls', the sorts' and the paddings'.
  c.backward += -3 + 2 + (ep ? 3 : 0) + sorts + padded;
  return c;
}

LayerWork layer_work(const Plan& plan, int64_t layer, double sequences, double routed_rows) {
  const ModelConfig& m = plan.model;
  const LayerSpec spec = layer_spec(plan, layer);
  const Precision gemm_precision = spec.precision;
  const ModelParams p = count_params(m);
  const AttentionParams& a = p.attention;
  const double t = sequences * double(plan.train.seq_len);
  const auto core = attention_core_flops(m, plan.train.seq_len, spec.attention_window);
  LayerWork w;
  w.moe = spec.moe;
  w.tokens = t;
  w.routed_rows = w.moe ? routed_rows : 0;
  const double nonmatmul = plan.hardware.nonmatmul_s_per_token_layer * t;
  const double h = double(m.hidden_size);
  const double heads = double(m.num_attention_heads);
  const double kv_heads = double(m.kv_heads());
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));

  // Attention block: F runs each projection once; B computes input gradients (same FLOPs as F)
  // and runs the FlashAttention backward (QK^T-shaped 3 more times, PV-shaped 2 more); W computes
  // weight gradients (same FLOPs as F).
  auto& af = w.parts[int(LayerPart::AttnF)];
  auto& ab = w.parts[int(LayerPart::AttnB)];
  auto& aw = w.parts[int(LayerPart::AttnW)];
  af.block = ab.block = aw.block = LayerBlock::Attention;
  // Shapes (n outputs, k deep) of each projection; MLA's up-projections read the latents.
  const GemmShape q_up = m.is_mla() ? GemmShape{heads * qk, double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden_size)}
                                    : GemmShape{heads * qk, h};
  const GemmShape kv_up = m.is_mla() ? GemmShape{heads * double(m.qk_nope_head_dim + m.v_head_dim), double(m.kv_lora_rank)}
                                     : GemmShape{kv_heads * (qk + v), h};
  const struct {
    std::string_view name;
    double params;
    GemmShape shape;
  } projections[] = {{"q_down", double(a.q_down), {double(m.q_lora_rank), h}},
                     {"kv_down", double(a.kv_down), {double(m.kv_lora_rank + m.qk_rope_head_dim), h}},
                     {"q_up", double(a.q_up), q_up},
                     {"kv_up", double(a.kv_up), kv_up},
                     {"attn_out", double(a.out), {h, heads * v, TpSplit::Reduction}}};
  for (const auto& pr : projections) {
    if (pr.params == 0) continue;
    af.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::Forward, pr.shape));
    ab.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::InputGrad, pr.shape));
    aw.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::WeightGrad, pr.shape));
  }
  // The attention core in BF16, its keys per query bounded by the layer's sliding window, if any.
  const auto attention_kernel = [&](std::string_view name, double flops, KernelPass pass) {
    Kernel k = kernel(name, flops, Precision::BF16, KernelClass::Attention, pass);
    k.attention_window = spec.attention_window;
    return k;
  };
  af.kernels.push_back(attention_kernel("attention_core", sequences * core.forward(), KernelPass::Forward));
  ab.kernels.push_back(attention_kernel("attention_core_bwd", sequences * (3 * core.qk + 2 * core.pv), KernelPass::InputGrad));
  if (w.moe) {
    const GemmShape router{double(m.n_routed_experts), h, TpSplit::Tokens};
    // parallel.moe_router_dtype fp32 (Megatron-Core's RouterGatingLinearFunction, moe_utils.py): the
    // forward multiplies the BF16 input and weight into FP32 logits; the backward casts both to FP32
    // and Transformer Engine runs those pure-FP32 GEMMs as TF32 (cublaslt_gemm.cu).
    const bool fp32 = plan.parallel.moe_router_dtype == RouterDtype::FP32;
    for (auto [part, pass] : {std::pair{&af, KernelPass::Forward}, {&ab, KernelPass::InputGrad}, {&aw, KernelPass::WeightGrad}}) {
      part->kernels.push_back(gemm_kernel("router", gemm(double(p.router), t), Precision::BF16, pass, router));
      part->kernels.back().graph = GraphGroup::MoeRouter;
      if (fp32 && pass != KernelPass::Forward) part->kernels.back().rate_share = 0.5;
    }
  }
  // Non-matmul kernels: about a third in forward, two thirds in backward (DeepSeek's trace:
  // 2.7 ms of F, 5.3 ms of B per layer), split evenly between attention and MLP.
  af.nonmatmul_s = nonmatmul / 6.0;
  ab.nonmatmul_s = nonmatmul / 3.0;

  // MLP block: dense FFN, or shared experts over all tokens plus routed experts over the rows
  // this GPU's experts received. Gated MLPs run gate and up as one GEMM, then down.
  auto& mf = w.parts[int(LayerPart::MlpF)];
  auto& mb = w.parts[int(LayerPart::MlpB)];
  auto& mw = w.parts[int(LayerPart::MlpW)];
  if (w.moe) mf.block = mb.block = mw.block = LayerBlock::Moe;
  const double in_mats = double(m.mlp_matrices() - 1);
  const auto mlp_shape = [&](double width, TpSplit first, TpSplit last) {
    return std::pair{GemmShape{in_mats * width, h, first}, GemmShape{h, width, last}};
  };
  std::vector<Kernel> mlp;
  if (w.moe) {
    if (p.shared_experts > 0) {
      const double fs = double(m.n_shared_experts * m.moe_intermediate_size + m.shared_expert_intermediate_size);
      const auto [up, down] = mlp_shape(fs, TpSplit::Tokens, TpSplit::Tokens);
      mlp.push_back(gemm_kernel("shared_experts", gemm(double(p.shared_experts - p.shared_experts_bias), t),
                                gemm_precision, KernelPass::Forward, up, down));
    }
    // Expert tensor parallelism splits them like a dense MLP, over parallel.expert_tp (part_cost).
    const auto [up, down] = mlp_shape(double(m.moe_intermediate_size), TpSplit::Columns, TpSplit::Reduction);
    Kernel routed = gemm_kernel("routed_experts", gemm(double(p.expert - p.expert_bias), w.routed_rows), gemm_precision,
                                KernelPass::Forward, up, down);
    routed.routed = true;
    mlp.push_back(routed);
  } else {
    const auto [up, down] = mlp_shape(double(m.intermediate_size), TpSplit::Columns, TpSplit::Reduction);
    mlp.push_back(gemm_kernel("dense_ffn", gemm(double(p.dense_ffn - p.dense_ffn_bias), t), gemm_precision,
                              KernelPass::Forward, up, down));
  }
  mf.kernels = mb.kernels = mw.kernels = mlp;
  for (Kernel& k : mb.kernels) k.pass = KernelPass::InputGrad;
  for (Kernel& k : mw.kernels) k.pass = KernelPass::WeightGrad;
  mf.nonmatmul_s = nonmatmul / 6.0;
  mb.nonmatmul_s = nonmatmul / 3.0;
  // The MoE block's Python-level work, priced per call at moe_layer_host_s over the flex
  // dispatcher's 38 calls (moe_python_calls).
  if (w.moe) {
    const MoePythonCalls calls = moe_python_calls(plan);
    const double per_call = plan.software.moe_layer_host_s / MoePythonCalls::kFlexTotal;
    mf.framework_host_s = per_call * calls.forward;
    mb.framework_host_s = per_call * calls.backward;
  }

  // Memory-bound kernels (the per-op cost model).
  const MemoryShape ms = memory_shape(plan, layer, w.moe);
  attention_forward_memory(af, ms);
  mlp_forward_memory(mf, ms);
  attention_backward_memory(ab, ms);
  mlp_backward_memory(mb, ms);

  // What the backward rebuilds before it can run (recomputed kernels keep their own precision and
  // efficiency): the whole forward again under full recompute, else each recompute module's part.
  const Recompute rc = spec.recompute;
  // The host's calls that issue the blocks' TP and CP collectives (model_parallel_comm.hpp); a full
  // recompute reruns the forward's.
  const bool up_proj = rc.has(Recompute::MlaUpProj) && p.recompute_per_layer > 0 && !rc.full();
  for (const auto& [part, attention, backward] : {std::tuple{LayerPart::AttnF, true, false}, {LayerPart::AttnB, true, true},
                                                  {LayerPart::MlpF, false, false}, {LayerPart::MlpB, false, true}}) {
    const BlockLaunches l = tp_cp_block_launches(plan, attention, backward, w.moe, gemm_precision == Precision::FP8, up_proj);
    w.parts[int(part)].collective_launches = l.calls;
    w.parts[int(part)].looped_collective_launches = l.looped;
  }
  if (rc.full()) {
    rerun(ab, af, [](const Kernel&) { return true; }, [](const MemoryOp&) { return true; });
    rerun(mb, mf, [](const Kernel&) { return true; }, [](const MemoryOp&) { return true; });
    ab.collective_launches += af.collective_launches;
    ab.looped_collective_launches += af.looped_collective_launches;
    mb.collective_launches += mf.collective_launches;
    mb.looped_collective_launches += mf.looped_collective_launches;
    ab.nonmatmul_s += af.nonmatmul_s;
    mb.nonmatmul_s += mf.nonmatmul_s;
    return w;
  }
  if (rc.has(Recompute::TorchtitanOps)) {  // the unsaved GEMMs and every memory-bound op of the forward
    for (const OpSacGemm& g : op_sac_recomputed_gemms(m, plan.train.precision == Precision::FP8))
      (g.mlp ? mb : ab).kernels.push_back(gemm_kernel(g.name, 2.0 * g.shape.n * g.shape.k * t, gemm_precision,
                                                      KernelPass::Forward, g.shape));
    ab.nonmatmul_s += af.nonmatmul_s;
    mb.nonmatmul_s += mf.nonmatmul_s;
    ab.memory.insert(ab.memory.end(), af.memory.begin(), af.memory.end());
    mb.memory.insert(mb.memory.end(), mf.memory.begin(), mf.memory.end());
    return w;
  }
  // The modules rerun GEMMs and memory-bound kernels only: the calibrated non-matmul knob
  // (nonmatmul_s) stays as measured, with whatever recompute the measured run did.
  const Elementwise act = activation_forward(ms);  // as mlp_forward_memory, an unfused clamp included
  if (rc.has(Recompute::CoreAttn))  // Megatron's selective default: the attention core's forward
    ab.kernels.push_back(attention_kernel("recompute_attention_core", sequences * core.forward(), KernelPass::Forward));
  if (rc.has(Recompute::MlaUpProj) && p.recompute_per_layer > 0) {
    // The latents' RMSNorms and the q and kv up-projections; under software.fused.mla_qkv false
    // (Megatron-Core's module) also their casts, RoPE and the copies of query, key and value. The
    // fused default charges no RoPE pass, so that DeepSeek's policy costs what it did before the
    // modules (the calibrated capture's fit is made with it).
    ab.kernels.push_back(gemm_kernel("recompute_up_proj", gemm(double(p.recompute_per_layer), t), gemm_precision,
                                     KernelPass::Forward, q_up, kv_up));
    mla_up_proj_recompute_memory(ab, ms);
  }
  if (rc.has(Recompute::Layernorm)) {  // the two pre-norms (DeepSeek: the RMSNorms, report 3.2.3)
    add(ab, "recompute_attn_norm", norm_forward(ms.eager).bytes * ms.h, 0, norm_forward(ms.eager).kernels);
    add(mb, "recompute_mlp_norm", norm_forward(ms.eager).bytes * ms.h, 0, norm_forward(ms.eager).kernels);
  }
  const auto mlp_body = [](const MemoryOp& op) { return op.name != "mlp_norm" && op.name != "mlp_residual"; };
  if (!w.moe) {
    if (rc.has(Recompute::Mlp))  // the dense MLP from its input (the pre-norm's output): GEMMs, activation
      rerun(mb, mf, [](const Kernel&) { return true; }, mlp_body);
    else if (rc.has(Recompute::OtherActs))
      add(mb, "recompute_activation", act.bytes * ms.f, 0, act.kernels);
    return w;
  }
  if (rc.has(Recompute::Moe)) {
    // The MoE layer from its input: router, permutes, experts (shared ones included); its dispatch
    // and combine go again too (workloads/model: recomputed_all_to_all).
    rerun(mb, af, [](const Kernel& k) { return k.name == "router"; }, [](const MemoryOp& op) { return op.name == "router_topk"; });
    rerun(mb, mf, [](const Kernel&) { return true; }, mlp_body);
    return w;
  }
  if (rc.has(Recompute::MoeAct)) add_per_expert(mb, "recompute_expert_activation", act.bytes * ms.fe, act.kernels);
  if (rc.has(Recompute::SharedExperts))
    rerun(mb, mf, [](const Kernel& k) { return k.name == "shared_experts"; }, [](const MemoryOp& op) { return op.shared_expert; });
  else if (rc.has(Recompute::OtherActs))
    add(mb, "recompute_shared_activation", act.bytes * ms.fs, 0, act.kernels, true);
  return w;
}

PartWork lm_head_work(const Plan& plan, double sequences) {
  const double t = sequences * double(plan.train.seq_len);
  PartWork w;
  // BF16 whatever the layers' precision (DeepSeek-V3 report 3.3.1).
  w.kernels.push_back(kernel("lm_head", gemm(double(plan.model.vocab_size * plan.model.hidden_size), t), Precision::BF16));
  return w;
}

HeadWork lm_head_passes(const Plan& plan, double sequences) {
  const ModelConfig& m = plan.model;
  const double t = sequences * double(plan.train.seq_len);
  const double flops = gemm(double(m.vocab_size * m.hidden_size), t);
  const GemmShape logits{double(m.vocab_size), double(m.hidden_size)};  // vocabulary-parallel: columns over TP
  const double h = double(m.hidden_size), vocab = double(m.vocab_size);
  HeadWork w;
  w.forward.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::Forward, logits));
  const bool eager = !plan.software.fused_elementwise;
  add(w.forward, "final_norm", norm_forward(eager).bytes * h, 0, norm_forward(eager).kernels);
  const bool fused = plan.software.fused_cross_entropy;
  add(w.forward, "cross_entropy", (fused ? kFusedCrossEntropyForwardBytesPerLogit : kCrossEntropyForwardBytesPerLogit) * vocab,
      0, fused ? 2 : 7);
  w.input_grad.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::InputGrad, logits));
  add(w.input_grad, "cross_entropy_bwd",
      (fused ? kFusedCrossEntropyBackwardBytesPerLogit : kCrossEntropyBackwardBytesPerLogit) * vocab, 0, fused ? 1 : 2);
  add(w.input_grad, "final_norm_bwd", norm_backward(eager).bytes * h, 0, norm_backward(eager).kernels);
  w.weight_grad.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::WeightGrad, logits));
  return w;
}

}  // namespace stepsim
