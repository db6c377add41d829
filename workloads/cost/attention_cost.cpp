#include "workloads/cost/attention_cost.hpp"

#include <algorithm>

namespace stepsim::cost {

AttentionFormat attention_format(const Plan& plan) {
  if (!plan.train.runs_fp8_attention()) {
    if (plan.software.attention_kernel == AttentionKernel::Flash2) return AttentionFormat::Flash2Bf16;
    const HardwareConfig& hw = plan.hardware;
    const bool older = plan.software.cudnn_version > 0 && hw.attention_cudnn_version > 0 &&
                       plan.software.cudnn_version < hw.attention_cudnn_version;
    return older && hw.attention_early.set() ? AttentionFormat::Bf16EarlyCudnn : AttentionFormat::Bf16;
  }
  return plan.train.low_precision == LowPrecision::Mxfp8 ? AttentionFormat::Mxfp8 : AttentionFormat::Fp8;
}

namespace {

// rate x keys / (keys + half), scaled by the head-dimension factor [d / (d + d_half)] / [128 / (128 + d_half)].
double curve_flops_per_s(double rate_tflops, double keys, double half, double head_dim, const HardwareConfig& hw) {
  const double d_half = hw.attention_head_dim_half;
  const double by_dim = (head_dim / (head_dim + d_half)) / (128.0 / (128.0 + d_half));
  return rate_tflops * 1e12 * keys / (keys + half) * by_dim;
}

}  // namespace

double attention_flops_per_s(double seq, double head_dim, bool backward, const HardwareConfig& hw, AttentionFormat format) {
  if (format == AttentionFormat::Bf16)
    return curve_flops_per_s(backward ? hw.attention_bwd_tflops : hw.attention_fwd_tflops, seq, hw.attention_seq_half, head_dim, hw);
  const HardwareConfig::AttentionCurve& c =
      format == AttentionFormat::Flash2Bf16       ? hw.attention_flash2
      : format == AttentionFormat::Bf16EarlyCudnn ? hw.attention_early
                                                  : hw.attention_curve(format == AttentionFormat::Mxfp8 ? LowPrecision::Mxfp8 : LowPrecision::Fp8);
  return curve_flops_per_s(backward ? c.bwd_tflops : c.fwd_tflops, seq, backward ? c.bwd_seq_half : c.fwd_seq_half, head_dim, hw);
}

double attention_window_half(const HardwareConfig& hw, bool backward) {
  const double half = backward ? hw.attention_window_bwd_half : hw.attention_window_fwd_half;
  return half > 0 ? half : hw.attention_seq_half;
}

double window_attention_flops_per_s(double window, double seq, double head_dim, bool backward, const HardwareConfig& hw,
                                    AttentionFormat format) {
  if (format != AttentionFormat::Bf16) return attention_flops_per_s(window, head_dim, backward, hw, format);
  const double windowed = curve_flops_per_s(backward ? hw.attention_bwd_tflops : hw.attention_fwd_tflops, window,
                                            attention_window_half(hw, backward), head_dim, hw);
  return std::min(windowed, attention_flops_per_s(seq, head_dim, backward, hw));
}

double attention_seconds(double flops, double seq, double head_dim, bool backward, const HardwareConfig& hw,
                         AttentionFormat format) {
  if (flops <= 0) return 0;
  return flops / attention_flops_per_s(seq, head_dim, backward, hw, format);
}

double attention_bwd_computed_flops(double window_flops, double seq, double window, AttentionFormat format,
                                    const HardwareConfig& hw) {
  if (format == AttentionFormat::Bf16 || format == AttentionFormat::Bf16EarlyCudnn ||
      format == AttentionFormat::Flash2Bf16 || hw.attention_fp8_bwd_skips_window ||
      window <= 0 || window >= seq)
    return window_flops;
  return window_flops * (seq * seq / 2.0) / (seq * window - window * window / 2.0);
}

}  // namespace stepsim::cost
