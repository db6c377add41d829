#include "workloads/layers/kernel_efficiency.hpp"

namespace stepsim {

namespace {

double profile_efficiency(const Kernel& k, LayerPart part, const HardwareConfig& hw) {
  // Names, not precisions: under train.precision bf16 the large GEMMs are BF16 too.
  if (k.name.find("attention_core") != std::string_view::npos) return hw.attention_efficiency;
  if (k.name.ends_with("router")) return hw.bf16_gemm_efficiency;
  const bool weight_grad = part == LayerPart::AttnW || part == LayerPart::MlpW;
  return weight_grad ? hw.wgrad_efficiency() : hw.gemm_efficiency;
}

}  // namespace

double kernel_efficiency(const Kernel& k, LayerPart part, const HardwareConfig& hw) {
  // A kernel on slower operands than its precision's (Kernel::rate_share: TF32) reaches that share.
  return k.rate_share * profile_efficiency(k, part, hw);
}

double effective_flops(const PartWork& w, LayerPart part, Precision p, const HardwareConfig& hw) {
  double sum = 0;
  for (const Kernel& k : w.kernels)
    if (k.precision == p) sum += k.flops / kernel_efficiency(k, part, hw);
  return sum;
}

}  // namespace stepsim
