// Derives a hardware profile from a real profiler trace of the capture scenario: how far each kind
// of kernel falls short of the speed-of-light model (capture_phases.hpp), as the efficiencies,
// non-matmul cost and all-to-all figures the simulator charges (HardwareConfig).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "simulator/calibration/capture_phases.hpp"
#include "vocabulary/plan.hpp"
#include "simulator/io/profile_trace.hpp"

namespace stepsim::calib {

struct Calibration {
  ComputeModel model = ComputeModel::SpeedOfLight;  // which keys were derived (the plan's sim.compute)
  HardwareConfig hardware;  // the capture plan's hardware with the derived keys set
  SoftwareConfig software;  // its software profile, with the fitted launch cost (predicted model)
  // Derived key -> how it was derived, with the numbers (written as YAML comments).
  std::vector<std::pair<std::string, std::string>> derivation;
};

// Per layer, with k = sms / (sms - comm_sms) and f = the share of the capture the communication
// stream is busy, a kernel class the simulation charges at rate x efficiency takes, on average,
// (SOL / efficiency) x (1 + f (k - 1)) under the SM tax; each efficiency makes that equal the trace:
//   gemm_efficiency       FP8 forward + input-gradient GEMMs (MoE grouped and dense), F and B
//   attention_efficiency  FlashAttention forward + backward
//   bf16_gemm_efficiency  BF16 GEMMs (routers)
//   wgrad_gemm_efficiency the W phase's span less its BF16 part (weight-gradient GEMMs and the
//                         casts that feed them; W kernels run on two streams, so the span counts)
//   nonmatmul_s_per_token_layer  F + B spans less their matmul kernels (norms, casts, SwiGLU,
//                         launch gaps), per token, over the SM-tax factor
//   a2a_efficiency        SOL transfer time / the dispatch + combine kernels' time (F and B)
//   a2a_latency_s         what the backward all-to-alls take beyond their transfers at that
//                         efficiency, per all-to-all (cached notify: handshake, waiting for peers)
//   a2a_layout_latency_s  what the forward pair takes beyond that: the forward dispatch's
//                         non-cached notify and layout
// comm_sms stays the plan's (the trace's DeepEP configuration, 20 of 132 SMs).
// That is the speed-of-light profile (sim.compute: speed-of-light). Under sim.compute: predicted it
// fits the per-op cost model's keys instead (the GEMMs' FP8 peak share and weight-gradient share,
// the attention rates, the HBM efficiency; and the software's launch cost, software.kernel_launch_s),
// which carry to other models; the all-to-all keys are fitted the same way in both.
Calibration calibrate(const traces::ProfileSummary& trace, const Plan& capture_plan);

// The keys the calibration derived (those of its compute model), in the profile's order, with their values.
std::vector<std::pair<std::string, double>> derived_keys(const Calibration& c);

// The profile as YAML (a `hardware:` map and, under the predicted model, a `software:` map of the
// capture's software with its fitted launch cost; loadable with hardware.profile), derivations as comments.
std::string profile_yaml(const Calibration& c, const std::string& trace_path);

}  // namespace stepsim::calib
