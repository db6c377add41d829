// Bytes per element of the number formats the step moves: activations and gathered weights travel
// in BF16, gradients are reduced in FP32 (mixed-precision training as Megatron-LM and DeepSeek run it).
#pragma once

namespace stepsim {

inline constexpr double kBf16Bytes = 2;
inline constexpr double kFp32Bytes = 4;

}  // namespace stepsim
