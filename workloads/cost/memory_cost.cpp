#include "workloads/cost/memory_cost.hpp"

#include "workloads/memory/state_bytes.hpp"

namespace stepsim::cost {

double memory_seconds(double bytes, const HardwareConfig& hw) {
  if (bytes <= 0) return 0;
  return bytes / (hw.hbm_GBps * 1e9 * hw.hbm_efficiency);
}

double optimizer_traffic_bytes_per_param(const Plan& plan) {
  return 2 * optimizer_state_bytes_per_param(plan) + kGradBytesPerParam + kWeightBytesPerParam;
}

double gradient_buffer_bytes_per_param(const Plan& plan) { return 2 * plan.parallel.grad_reduce_bytes(); }

}  // namespace stepsim::cost
