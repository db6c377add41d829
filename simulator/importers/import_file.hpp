// An import as `stepsim import` and the Python module run it: the options (the number of GPUs, GPUs
// per node, the GPU preset) checked as given -- a 0, a sign, other characters, an overflowing count
// or an unknown preset is refused by name -- and the file read by the tool's importer.
#pragma once

#include <string>

#include "simulator/importers/importers.hpp"

namespace stepsim::importers {

// How the caller calls each option in messages ("--gpus" on the command line, "gpus=" in Python).
struct ImportOptionNames {
  std::string gpus = "--gpus";
  std::string gpus_per_node = "--gpus-per-node";
  std::string hardware = "--hardware";
};

// Each argument as typed; empty: not given (the importer then reads the file, Megatron's torchrun,
// else the default). Throws ConfigError.
ImportOptions import_options(const std::string& gpus, const std::string& gpus_per_node, const std::string& hardware,
                             const ImportOptionNames& names = {});

// Refuses a `tool` other than "megatron" and "torchtitan", naming both.
void check_import_tool(const std::string& tool);

// Reads `path` (at most 1 MiB) with the importer of `tool` (checked as above). Throws ConfigError.
ImportedPlan import_file(const std::string& tool, const std::string& path, const ImportOptions& options);

}  // namespace stepsim::importers
