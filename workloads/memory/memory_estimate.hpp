// The static memory estimate of a plan (the part-2 spreadsheet view, printed by `stepsim
// roofline`): per pipeline rank, weights, gradients, optimizer state and buffers plus the
// activations of the microbatches its schedule keeps in flight (DualPipeV PP + 1/2, 1F1B
// PP - rank, FSDP one), each over all the rank's layers; the busiest rank is reported.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "vocabulary/memory_model.hpp"

namespace stepsim {

struct MemoryEstimate {
  int64_t rank = 0;      // the busiest pipeline rank
  int64_t layers = 0;    // transformer layers it holds
  int64_t moe_layers = 0;
  bool lm_head = false;
  double in_flight_microbatches = 0;
  double microbatch_tokens = 0;
  ops::StaticMemory fixed;
  std::string weights_label = "weights (BF16)", grads_label = "gradients (FP32)", activations_label = "activations";
  double activations_bytes = 0;  // saved activations in flight (+ the head's logits, + one recompute set)
  double total_bytes = 0;
  double capacity_bytes = 0;     // hardware.memory_GiB
  bool fits = false;
};

MemoryEstimate estimate_memory(const Plan& plan);
nlohmann::json memory_estimate_json(const MemoryEstimate& e);
std::string memory_estimate_text(const MemoryEstimate& e);

// How many microbatches pipeline rank `rank` keeps in flight at its peak under the plan's schedule.

}  // namespace stepsim
