// How a hardware profile slows each kernel: the share of the stated rate (fp8_tflops or
// bf16_tflops) a real kernel reaches, by kind. 1 everywhere = speed of light.
#pragma once

#include "vocabulary/plan.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim {

// FP8 GEMMs: gemm_efficiency, or wgrad_gemm_efficiency in weight-gradient parts; attention core:
// attention_efficiency; other BF16 GEMMs (the routers): bf16_gemm_efficiency; each times the kernel's
// Kernel::rate_share (an FP32 router's backward: TF32). (The LM head, not a
// layer kernel, runs at gemm_efficiency: see ModelWorkload.)
double kernel_efficiency(const Kernel& k, LayerPart part, const HardwareConfig& hw);

// FLOPs of a part's kernels of one precision, each divided by its efficiency: what a GPU running
// at the stated rate must execute to take as long as the real kernels.
double effective_flops(const PartWork& w, LayerPart part, Precision p, const HardwareConfig& hw);

}  // namespace stepsim
