// The layers each pipeline stage and rank holds, as reports show them: parallel.stage_layers where
// the plan gives it (an imported launch's split), else the release's framework's split
// (software.pipeline_split), else stepsim's own balance (layer_partition.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

struct StageLayersView {
  std::vector<int64_t> per_stage;  // decoder layers of each stage, in layer order
  std::vector<int64_t> per_rank;   // over each pipeline rank's stages
  std::string source;              // where the split comes from, as the reports say it
};

StageLayersView stage_layers_view(const Plan& plan);

// "5 x 3, 6" for {5, 5, 5, 6}: runs of equal counts.
std::string counts_text(const std::vector<int64_t>& counts);

// One line for the text report ("" without a pipeline): the stages' and ranks' layers and where
// the split comes from.
std::string stage_layers_text(const Plan& plan);

}  // namespace stepsim
