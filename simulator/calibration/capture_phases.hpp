// The per-layer phases of a profiler capture (schedule: capture): forward (F), input gradient (B),
// weight gradient (W) on the compute stream, and the all-to-all kernels launched under forward
// (comm_F) and backward (comm_B) work. Three views of the same phases: speed of light (closed
// form), simulated (from the engine's spans) and real (from a profiler trace).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"
#include "simulator/io/profile_trace.hpp"

namespace stepsim::calib {

using PhaseMap = std::map<std::string, double>;  // phase name -> seconds per layer

const std::vector<std::string>& phase_names();  // F, B, W, comm_F, comm_B

// Speed of light of one layer of the capture, per phase, with its parts by kernel class:
// compute classes "fp8_gemm", "bf16_gemm", "attention" at the stated rates (no efficiency, no
// non-matmul work, no SM tax); comm_F / comm_B: one dispatch and one combine each, their busiest
// link's bytes at its stated bandwidth.
struct CaptureSol {
  PhaseMap phase_s;
  std::map<std::string, PhaseMap> class_s;  // F / B / W -> class -> seconds
  double tokens = 0;                        // tokens of one microbatch on one GPU
};
CaptureSol capture_sol(const Plan& plan);

// The per-op cost model's view of one layer of the capture (sim.compute: predicted, no SM tax),
// per phase F / B / W and class: "fp8_gemm", "bf16_gemm", "attention", "memory" (seconds at the
// plan's hardware keys) and "kernels" (launches counted).
std::map<std::string, PhaseMap> capture_predicted(const Plan& plan);

// The same phases from a simulated capture (record_spans on): compute spans by phase and EP
// all-to-all spans by phase on the simulated GPU 0, summed, divided by the layers.
PhaseMap capture_sim(const Plan& plan, const SimResult& result);

// The trace's per-layer phases: each phase's wall span (kernels of one phase overlapping on two
// streams count once, the gaps between them count), divided by the layer pairs.
PhaseMap capture_real(const traces::ProfileSummary& trace);

// Throws ConfigError unless `plan` is a capture scenario (schedule: capture).
void require_capture(const Plan& plan, const std::string& command);

}  // namespace stepsim::calib
