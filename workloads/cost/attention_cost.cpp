#include "workloads/cost/attention_cost.hpp"

namespace stepsim::cost {

AttentionFormat attention_format(const Plan& plan) {
  if (!plan.train.runs_fp8_attention()) return AttentionFormat::Bf16;
  return plan.train.low_precision == LowPrecision::Mxfp8 ? AttentionFormat::Mxfp8 : AttentionFormat::Fp8;
}

double attention_flops_per_s(double keys, double head_dim, bool backward, const HardwareConfig& hw, AttentionFormat format,
                             bool windowed) {
  double rate = backward ? hw.attention_bwd_tflops : hw.attention_fwd_tflops;
  double seq_half = hw.attention_seq_half;
  const double window_half = backward ? hw.attention_window_bwd_half : hw.attention_window_fwd_half;
  if (windowed && window_half > 0) seq_half = window_half;
  if (format != AttentionFormat::Bf16) {
    const HardwareConfig::AttentionCurve& c =
        hw.attention_curve(format == AttentionFormat::Mxfp8 ? LowPrecision::Mxfp8 : LowPrecision::Fp8);
    rate = backward ? c.bwd_tflops : c.fwd_tflops;
    seq_half = backward ? c.bwd_seq_half : c.fwd_seq_half;
  }
  const double d_half = hw.attention_head_dim_half;
  const double by_dim = (head_dim / (head_dim + d_half)) / (128.0 / (128.0 + d_half));
  return rate * 1e12 * keys / (keys + seq_half) * by_dim;
}

double attention_seconds(double flops, double keys, double head_dim, bool backward, const HardwareConfig& hw,
                         AttentionFormat format, bool windowed) {
  if (flops <= 0) return 0;
  return flops / attention_flops_per_s(keys, head_dim, backward, hw, format, windowed);
}

double attention_bwd_computed_flops(double window_flops, double seq, double window, AttentionFormat format,
                                    const HardwareConfig& hw) {
  if (format == AttentionFormat::Bf16 || hw.attention_fp8_bwd_skips_window || window <= 0 || window >= seq)
    return window_flops;
  return window_flops * (seq * seq / 2.0) / (seq * window - window * window / 2.0);
}

}  // namespace stepsim::cost
