// Time of memory-bound kernels (norms, activations, RoPE, residual adds, casts, permutes, softmax
// and cross-entropy, the optimizer step): bytes read and written over the HBM bandwidth the
// kernels reach (hardware.hbm_GBps x hardware.hbm_efficiency).
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::cost {

double memory_seconds(double bytes, const HardwareConfig& hw);

// Bytes the optimizer step moves per parameter of the GPU's shard: Adam reads and writes the FP32
// master weight and both moments (optimizer_state_bytes_per_param, as the memory model holds them),
// reads the FP32 gradient and writes the BF16 weight.
double optimizer_traffic_bytes_per_param(const Plan& plan);
// Bytes per parameter the GPU holds (not only its shard) around the step: the gradient norm for
// clipping reads its gradients (in parallel.grad_reduce_dtype) and the next step's accumulation
// zeroes them.
double gradient_buffer_bytes_per_param(const Plan& plan);

}  // namespace stepsim::cost
