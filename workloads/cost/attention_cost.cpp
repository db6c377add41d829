#include "workloads/cost/attention_cost.hpp"

namespace stepsim::cost {

double attention_flops_per_s(double seq, double head_dim, bool backward, const HardwareConfig& hw) {
  const double rate = (backward ? hw.attention_bwd_tflops : hw.attention_fwd_tflops) * 1e12;
  const double d_half = hw.attention_head_dim_half;
  const double by_dim = (head_dim / (head_dim + d_half)) / (128.0 / (128.0 + d_half));
  return rate * seq / (seq + hw.attention_seq_half) * by_dim;
}

double attention_seconds(double flops, double seq, double head_dim, bool backward, const HardwareConfig& hw) {
  if (flops <= 0) return 0;
  return flops / attention_flops_per_s(seq, head_dim, backward, hw);
}

}  // namespace stepsim::cost
