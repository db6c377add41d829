#include "workloads/layers/layer_work.hpp"

#include "vocabulary/layer_spec.hpp"
#include "vocabulary/model_params.hpp"

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

}  // namespace

LayerWork layer_work(const Plan& plan, int64_t layer, double sequences, double routed_rows) {
  const ModelConfig& m = plan.model;
  const LayerSpec spec = layer_spec(plan, layer);
  const Precision gemm_precision = spec.precision;
  const ModelParams p = count_params(m);
  const AttentionParams& a = p.attention;
  const double t = sequences * double(plan.train.seq_len);
  const auto core = attention_core_flops(m, plan.train.seq_len);
  LayerWork w;
  w.moe = spec.moe;
  w.tokens = t;
  w.routed_rows = w.moe ? routed_rows : 0;
  const double nonmatmul = plan.hardware.nonmatmul_s_per_token_layer * t;

  // Attention block: F runs each projection once; B computes input gradients (same FLOPs as F)
  // and runs the FlashAttention backward (QK^T-shaped 3 more times, PV-shaped 2 more); W computes
  // weight gradients (same FLOPs as F).
  auto& af = w.parts[int(LayerPart::AttnF)];
  auto& ab = w.parts[int(LayerPart::AttnB)];
  auto& aw = w.parts[int(LayerPart::AttnW)];
  const std::pair<std::string_view, double> projections[] = {
      {"q_down", double(a.q_down)}, {"kv_down", double(a.kv_down)}, {"q_up", double(a.q_up)},
      {"kv_up", double(a.kv_up)},   {"attn_out", double(a.out)}};
  for (const auto& [name, params] : projections) {
    if (params == 0) continue;
    af.kernels.push_back({name, gemm(params, t), gemm_precision});
    ab.kernels.push_back({name, gemm(params, t), gemm_precision});
    aw.kernels.push_back({name, gemm(params, t), gemm_precision});
  }
  af.kernels.push_back({"attention_core", sequences * core.forward(), Precision::BF16});
  ab.kernels.push_back({"attention_core_bwd", sequences * (3 * core.qk + 2 * core.pv), Precision::BF16});
  if (w.moe) {
    af.kernels.push_back({"router", gemm(double(p.router), t), Precision::BF16});
    ab.kernels.push_back({"router", gemm(double(p.router), t), Precision::BF16});
    aw.kernels.push_back({"router", gemm(double(p.router), t), Precision::BF16});
  }
  // Non-matmul kernels: about a third in forward, two thirds in backward (DeepSeek's trace:
  // 2.7 ms of F, 5.3 ms of B per layer), split evenly between attention and MLP.
  af.nonmatmul_s = nonmatmul / 6.0;
  ab.nonmatmul_s = nonmatmul / 3.0;

  // MLP block: dense FFN, or shared experts over all tokens plus routed experts over the rows
  // this GPU's experts received.
  auto& mf = w.parts[int(LayerPart::MlpF)];
  auto& mb = w.parts[int(LayerPart::MlpB)];
  auto& mw = w.parts[int(LayerPart::MlpW)];
  std::vector<Kernel> mlp;
  if (w.moe) {
    if (p.shared_experts > 0) mlp.push_back({"shared_experts", gemm(double(p.shared_experts), t), gemm_precision});
    mlp.push_back({"routed_experts", gemm(double(p.expert), w.routed_rows), gemm_precision});
  } else {
    mlp.push_back({"dense_ffn", gemm(double(p.dense_ffn), t), gemm_precision});
  }
  mf.kernels = mb.kernels = mw.kernels = mlp;
  mf.nonmatmul_s = nonmatmul / 6.0;
  mb.nonmatmul_s = nonmatmul / 3.0;

  // What the backward rebuilds before it can run (recomputed kernels keep their own precision and
  // efficiency). DeepSeek's norms and SwiGLU are non-matmul work, inside the calibrated knob.
  switch (spec.recompute) {
    case Recompute::None: break;
    case Recompute::DeepSeek:
      if (p.recompute_per_layer > 0)
        ab.kernels.push_back({"recompute_up_proj", gemm(double(p.recompute_per_layer), t), gemm_precision});
      break;
    case Recompute::Selective:  // Megatron: the attention core's forward, again
      ab.kernels.push_back({"recompute_attention_core", sequences * core.forward(), Precision::BF16});
      break;
    case Recompute::Full:  // the whole forward of the layer, again
      for (const Kernel& k : af.kernels)
        ab.kernels.push_back({recomputed_name(k.name), k.flops, k.precision});
      for (const Kernel& k : mf.kernels) mb.kernels.push_back({recomputed_name(k.name), k.flops, k.precision});
      ab.nonmatmul_s += af.nonmatmul_s;
      mb.nonmatmul_s += mf.nonmatmul_s;
      break;
  }
  return w;
}

PartWork lm_head_work(const Plan& plan, double sequences) {
  const double t = sequences * double(plan.train.seq_len);
  PartWork w;
  // BF16 whatever the layers' precision (DeepSeek-V3 report 3.3.1).
  w.kernels.push_back({"lm_head", gemm(double(plan.model.vocab_size * plan.model.hidden_size), t), Precision::BF16});
  return w;
}

}  // namespace stepsim
