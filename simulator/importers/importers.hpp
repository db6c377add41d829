// `stepsim import`: a Megatron-LM launch script or a torchtitan job config read into a stepsim plan
// (simulator/importers/imported_plan.hpp writes it). Nothing from the file is ever run.
#pragma once

#include <cstdint>
#include <string>

#include "simulator/importers/imported_plan.hpp"

namespace stepsim::importers {

struct ImportOptions {
  int64_t gpus = 0;           // --gpus: the world size (0 = from the file's torchrun, where there is one)
  int64_t gpus_per_node = 0;  // --gpus-per-node (0 = torchrun's --nproc-per-node, else 8)
  std::string preset = "h100-sxm";  // --hardware: the GPU preset written into the plan
};

// Megatron-LM: a launch script (bash: variables, arrays, line continuations, a torchrun prefix) or
// a bare argument list. `source` names the file in messages. Throws ConfigError.
ImportedPlan import_megatron(const std::string& text, const std::string& source, const ImportOptions& options);

// torchtitan: a job config TOML (train_configs/*.toml). Throws ConfigError.
ImportedPlan import_torchtitan(const std::string& text, const std::string& source, const ImportOptions& options);

}  // namespace stepsim::importers
