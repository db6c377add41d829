#include "workloads/cost/gemm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim::cost {

double gemm_peak_tflops(const GemmCall& g, const HardwareConfig& hw) {
  return hw.peak_tflops(g.precision, g.format);
}

double gemm_peak_share(const GemmCall& g, const HardwareConfig& hw) {
  if (g.precision == Precision::BF16) return hw.gemm_bf16_peak_share;
  switch (g.format) {
    case LowPrecision::Fp8: return hw.gemm_fp8_peak_share;
    case LowPrecision::Mxfp8: return hw.gemm_mxfp8_peak_share;
    case LowPrecision::Nvfp4: return hw.gemm_nvfp4_peak_share;
  }
  return hw.gemm_fp8_peak_share;
}

double gemm_operand_bytes(const GemmCall& g) {
  if (g.precision == Precision::BF16) return 2;
  switch (g.format) {
    case LowPrecision::Fp8: return 1;
    case LowPrecision::Mxfp8:
    case LowPrecision::Nvfp4: return block_scaled_copy_bytes(g.format);  // with its block scales
  }
  return 1;
}

double gemm_compute_efficiency(const GemmCall& g, const HardwareConfig& hw) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 1;
  const double share = gemm_peak_share(g, hw);
  const double tm = double(hw.gemm_tile_m), tn = double(hw.gemm_tile_n), sms = double(hw.sms);
  // The per-tile overhead is a fixed time: at a faster number format it is worth more K elements.
  const double overhead = hw.gemm_k_overhead * gemm_peak_tflops(g, hw) / hw.peak_bf16_tflops;
  const auto narrow = [](double tile, double dim) { return std::min(tile, std::ceil(dim / 16) * 16); };
  // cuBLAS picks among tile shapes. A dimension narrower than the tile maps to the MMA's narrow side
  // (operands swapped), padded to 16; a partly filled edge tile costs a whole one; when the tiles
  // cannot fill the SMs the reduction is split over more of them (split-K); the last wave of tiles
  // leaves some SMs idle.
  double best = 0;
  for (const auto& [ta, tb] : {std::pair{tm, tn}, std::pair{tn, tm}, std::pair{tm, tm}}) {
    const double a = narrow(ta, g.m), b = narrow(tb, g.n);
    const double rows = std::ceil(g.m / a), cols = std::ceil(g.n / b), tiles = rows * cols * g.groups;
    const double splits = tiles < sms ? std::max(1.0, std::min(std::floor(sms / tiles), std::floor(g.k / 256))) : 1.0;
    const double waves = tiles * splits / sms;
    const double filled = (g.m * g.n) / (rows * a * cols * b);
    const double depth = g.k / splits;
    best = std::max(best, filled * waves / std::ceil(waves) * depth / (depth + overhead));
  }
  return share * best;
}

double gemm_seconds(const GemmCall& g, const HardwareConfig& hw) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 0;
  const double flops = 2.0 * g.m * g.n * g.k * g.groups;
  const double peak = gemm_peak_tflops(g, hw) * 1e12;
  const double compute_s = flops / (peak * gemm_compute_efficiency(g, hw));
  const double in_bytes = gemm_operand_bytes(g);
  const double bytes = g.groups * ((g.m * g.k + g.k * g.n) * in_bytes + g.m * g.n * g.out_bytes);
  const double memory_s = bytes / (hw.hbm_GBps * 1e9 * hw.hbm_efficiency);
  return std::max(compute_s, memory_s);
}

}  // namespace stepsim::cost
