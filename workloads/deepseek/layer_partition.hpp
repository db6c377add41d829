// Which layers each pipeline stage holds. Stages get contiguous layers so that every pipeline rank
// carries about the same compute: the LM head on the last stage counts as the layers it costs,
// which matters for DualPipeV, where rank 0 holds both the first and the last stage.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/config/plan.hpp"

namespace stepsim {

struct StageLayers {
  int64_t first = 0;  // first layer index
  int64_t count = 0;  // layers in this stage
  bool has_lm_head = false;
};

// One entry per stage (plan.stages()), in stage order.
std::vector<StageLayers> partition_layers(const Plan& plan);

// Speed-of-light seconds of one layer (or the head) per token, used only to balance stages.
double layer_cost_s_per_token(const Plan& plan, int64_t layer);
double lm_head_cost_s_per_token(const Plan& plan);

}  // namespace stepsim
