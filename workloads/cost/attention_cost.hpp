// Time of the attention core (FlashAttention: QK^T, softmax, PV in one kernel; its backward
// recomputes QK^T) from its FLOPs, at a rate that grows with the sequence length (longer rows
// amortise each tile's softmax and the causal diagonal) and the head dimension (more MMA work per
// softmax element): rate = attention_{fwd,bwd}_tflops x S / (S + S_half) x [d / (d + d_half)] /
// [128 / (128 + d_half)]. The preset fits S_half and d_half to a published kernel benchmark. Under
// train.fp8_attention the kernel runs in the GEMMs' FP8 format on that format's own curve (its rate
// and S_half per pass, from the same kind of benchmark), with the same head-dimension factor.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::cost {

// The attention core's number format: BF16, or the plan's FP8 format under train.fp8_attention.
enum class AttentionFormat : uint8_t { Bf16, Fp8, Mxfp8 };
AttentionFormat attention_format(const Plan& plan);

// FLOP/s of the kernel whose queries each read `keys` keys (the sequence, or a sliding window
// shorter than it: `windowed`) at head dimension `head_dim`. A windowed BF16 kernel's rate grows with
// the window as R x W / (W + hardware.attention_window_{fwd,bwd}_half), the causal curve's form with
// each pass's own constant fitted to published windowed timings (docs/sliding-window-attention-audit.md);
// the FP8 curves have no windowed figure and keep their causal constant.
double attention_flops_per_s(double keys, double head_dim, bool backward, const HardwareConfig& hw,
                             AttentionFormat format = AttentionFormat::Bf16, bool windowed = false);

double attention_seconds(double flops, double keys, double head_dim, bool backward, const HardwareConfig& hw,
                         AttentionFormat format = AttentionFormat::Bf16, bool windowed = false);

// The backward FLOPs a kernel computes for a sliding-window layer whose useful FLOPs are
// `window_flops`: those, or every causal tile's where the FP8 backward does not skip the tiles
// outside the window (hardware.attention_fp8_bwd_skips_window false): the causal S^2 / 2 query-key
// pairs against the window's S W - W^2 / 2 (vocabulary/model_params.cpp's count).
double attention_bwd_computed_flops(double window_flops, double seq, double window, AttentionFormat format,
                                    const HardwareConfig& hw);

}  // namespace stepsim::cost
