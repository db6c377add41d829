#include "workloads/deepseek/layer_partition.hpp"

#include <cmath>

#include "workloads/model/model_params.hpp"

namespace stepsim {

double layer_cost_s_per_token(const Plan& plan, int64_t layer) {
  const ModelConfig& m = plan.model;
  const ModelParams p = count_params(m);
  const double fp8 = plan.hardware.fp8_tflops * 1e12, bf16 = plan.hardware.bf16_tflops * 1e12;
  const bool moe = m.is_moe() && layer >= m.first_k_dense_replace;
  const double fp8_params = double(p.attention.total() + (moe ? p.shared_experts + p.expert * p.experts_per_token : p.dense_ffn));
  const double bf16_params = moe ? double(p.router) : 0.0;
  const auto core = attention_core_flops(m, plan.train.seq_len);
  const double attention_per_token = core.training() / double(plan.train.seq_len);
  const double recompute = 2.0 * double(p.recompute_per_layer);
  return (6.0 * fp8_params + recompute) / fp8 + (6.0 * bf16_params + attention_per_token) / bf16;
}

double lm_head_cost_s_per_token(const Plan& plan) {
  return 6.0 * double(plan.model.vocab_size * plan.model.hidden_size) / (plan.hardware.bf16_tflops * 1e12);
}

std::vector<StageLayers> partition_layers(const Plan& plan) {
  const int64_t stages = plan.stages(), layers = plan.model.num_hidden_layers;
  // Cumulative cost of layers [0, i), with the head as a trailing item glued to the last stage.
  std::vector<double> cum(static_cast<size_t>(layers + 1), 0.0);
  for (int64_t i = 0; i < layers; ++i) cum[size_t(i + 1)] = cum[size_t(i)] + layer_cost_s_per_token(plan, i);
  const double total = cum.back() + lm_head_cost_s_per_token(plan);
  std::vector<StageLayers> out(static_cast<size_t>(stages));
  int64_t start = 0;
  for (int64_t s = 0; s < stages; ++s) {
    // Cut where the running cost is closest to the stage's fair share, leaving each later stage a layer.
    int64_t end = layers;
    if (s + 1 < stages) {
      const double target = total * double(s + 1) / double(stages);
      end = start + 1;
      while (end < layers - (stages - s - 1) && std::abs(cum[size_t(end + 1)] - target) < std::abs(cum[size_t(end)] - target))
        ++end;
    }
    out[size_t(s)] = {start, end - start, s + 1 == stages};
    start = end;
  }
  return out;
}

}  // namespace stepsim
