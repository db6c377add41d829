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

// The attention core's kernel and number format: BF16 in the preset's fused kernel, the same kernel
// as an earlier cuDNN release ran it (software.cudnn_version older than the preset's curve, where the
// preset has that release's curve: hardware.attention_early), BF16 in FlashAttention-2
// (software.attention_kernel flash2), or the plan's FP8 format under train.fp8_attention.
enum class AttentionFormat : uint8_t { Bf16, Bf16EarlyCudnn, Flash2Bf16, Fp8, Mxfp8 };
AttentionFormat attention_format(const Plan& plan);

// FLOP/s of the causal kernel over `seq` keys at head dimension `head_dim`.
double attention_flops_per_s(double seq, double head_dim, bool backward, const HardwareConfig& hw,
                             AttentionFormat format = AttentionFormat::Bf16);

// FLOP/s of a sliding-window layer's kernel, each query reading `window` keys of a `seq`-long
// sequence (window < seq). BF16: R x W / (W + hardware.attention_window_{fwd,bwd}_half), the causal
// curve's form with each pass's own constant fitted to published windowed timings
// (docs/sliding-window-attention-audit.md), never above the causal rate at `seq`, so a window as
// long as the sequence costs what the causal layer costs. FP8 and FlashAttention-2: the curve's
// causal rate at S = W (no windowed figure was found); an earlier cuDNN release's curve likewise.
double window_attention_flops_per_s(double window, double seq, double head_dim, bool backward, const HardwareConfig& hw,
                                    AttentionFormat format = AttentionFormat::Bf16);

// The preset's window constant K for one pass: hardware.attention_window_{fwd,bwd}_half, or the
// causal attention_seq_half where the preset sets none.
double attention_window_half(const HardwareConfig& hw, bool backward);

// Seconds of `flops` of the causal kernel over `seq` keys.
double attention_seconds(double flops, double seq, double head_dim, bool backward, const HardwareConfig& hw,
                         AttentionFormat format = AttentionFormat::Bf16);

// The backward FLOPs a kernel computes for a sliding-window layer whose useful FLOPs are
// `window_flops`: those, or every causal tile's where the FP8 backward does not skip the tiles
// outside the window (hardware.attention_fp8_bwd_skips_window false): the causal S^2 / 2 query-key
// pairs against the window's S W - W^2 / 2 (vocabulary/model_params.cpp's count).
double attention_bwd_computed_flops(double window_flops, double seq, double window, AttentionFormat format,
                                    const HardwareConfig& hw);

}  // namespace stepsim::cost
