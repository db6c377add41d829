// `stepsim import`: a Megatron-LM launch script or a torchtitan job config read into a stepsim plan
// (simulator/importers/imported_plan.hpp writes it). Nothing from the file is ever run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// How the Megatron importer's argument table (kArgs) reads `name` (no dashes): "key" (one to one
// through simulator/config/key_aliases.cpp), "use" (read by the importer's code), "no-cost",
// "same" (what stepsim models anyway), "refuse"; nullptr for a name it does not know. The exporter
// writes only arguments the table knows.
const char* megatron_argument_role(std::string_view name);

// The model flavours torchtitan's importer knows, as (model.name, model.flavor) pairs in its
// table's order.
std::vector<std::pair<std::string, std::string>> torchtitan_flavours();

// Whether the torchtitan importer reads `dotted_key` ("parallelism.tensor_parallel_degree"): the
// exporter writes only keys it reads back (and no-cost placeholders).
bool torchtitan_reads_key(std::string_view dotted_key);

// torchtitan: a job config TOML (train_configs/*.toml). Throws ConfigError.
ImportedPlan import_torchtitan(const std::string& text, const std::string& source, const ImportOptions& options);

}  // namespace stepsim::importers
