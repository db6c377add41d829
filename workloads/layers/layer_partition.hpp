// Which layers each pipeline stage holds. Stages get contiguous layers chosen so that the busiest
// pipeline rank carries as little compute as possible: the LM head on the last stage counts as the
// layers it costs, and under a V shape (DualPipeV, ZB-V) a rank's load is the sum of its two stages (rank 0 holds
// both the first and the last).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

struct StageLayers {
  int64_t first = 0;  // first layer index
  int64_t count = 0;  // layers in this stage
  bool has_lm_head = false;
};

// One entry per slot of the schedule's layer partition (plan.stages(); DualPipe's two directions
// share one), in path order: parallel.stage_layers where the plan gives it, else the release's own
// split (software.pipeline_split), else balanced.
std::vector<StageLayers> partition_layers(const Plan& plan);

// Where partition_layers' counts come from, as reports say it: the plan, the framework's rule, or
// stepsim's balance; `refusal` says why the framework's rule did not apply (empty when it did, or
// when the profile asks for the balance).
struct SplitOrigin {
  enum Kind : uint8_t { Given, Framework, Balanced } kind = Balanced;
  std::string refusal;
};
SplitOrigin split_origin(const Plan& plan);

// Speed-of-light seconds of one layer (or the head) per token, used only to balance stages.
double layer_cost_s_per_token(const Plan& plan, int64_t layer);
double lm_head_cost_s_per_token(const Plan& plan);

}  // namespace stepsim
