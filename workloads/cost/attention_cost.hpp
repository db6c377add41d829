// Time of the attention core (FlashAttention: QK^T, softmax, PV in one kernel; its backward
// recomputes QK^T) from its FLOPs, at a rate that grows with the sequence length (longer rows
// amortise each tile's softmax and the causal diagonal) and the head dimension (more MMA work per
// softmax element): rate = attention_{fwd,bwd}_tflops x S / (S + S_half) x [d / (d + d_half)] /
// [128 / (128 + d_half)]. The preset fits S_half and d_half to a published kernel benchmark.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::cost {

// FLOP/s of the kernel at sequence length `seq` and head dimension `head_dim`.
double attention_flops_per_s(double seq, double head_dim, bool backward, const HardwareConfig& hw);

double attention_seconds(double flops, double seq, double head_dim, bool backward, const HardwareConfig& hw);

}  // namespace stepsim::cost
