// Time of one GEMM on one GPU from its shape: the tensor cores' sustained share of the dense peak,
// a fixed cost per output tile (prologue and epilogue, as K elements of main loop), waves of tiles
// over the SMs (the last wave runs part-empty) and, for skinny shapes, the HBM traffic of its
// operands (a roofline on arithmetic intensity). Parameters: the hardware preset's gemm_* keys.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::cost {

struct GemmCall {
  double m = 0, n = 0, k = 0;  // output rows x columns, reduction depth
  double groups = 1;           // independent GEMMs of this shape in one grouped launch (experts)
  Precision precision = Precision::BF16;
  double out_bytes = 2;        // bytes per output element written (read too when accumulating)
  LowPrecision format = LowPrecision::Fp8;  // FP8 GEMMs: per-tensor / 1x128 FP8, MXFP8 or NVFP4
};

// The dense peak (TFLOP/s) and the preset's share of it a GEMM of this number format runs at.
double gemm_peak_tflops(const GemmCall& g, const HardwareConfig& hw);
double gemm_peak_share(const GemmCall& g, const HardwareConfig& hw);
// Bytes of one operand element as the GEMM reads it (block formats: with their scales).
double gemm_operand_bytes(const GemmCall& g);

// Share of the dense peak the GEMM reaches from its compute alone (tensor-core share x waves x
// k / (k + overhead)); the best of the preset's tile and its transpose, and a square tile.
double gemm_compute_efficiency(const GemmCall& g, const HardwareConfig& hw);

// Seconds: the longer of the compute time at that efficiency and the operands' HBM traffic at
// hbm_GBps x hbm_efficiency.
double gemm_seconds(const GemmCall& g, const HardwareConfig& hw);

}  // namespace stepsim::cost
