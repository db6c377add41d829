// `stepsim export`: a loaded plan written as the job another tool runs -- a Megatron-LM launch
// script or a torchtitan job TOML -- the inverse of `stepsim import` (importers.hpp). Every argument
// written is one the importer reads back (megatron_argument_role, the torchtitan key table), and
// export_plan imports its own output and compares the two plans key by key (plan_fields.hpp): a
// plan the target cannot express is refused by name, never written approximately.
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim::importers {

struct ExportOptions {
  // The GPU preset whose rates the plan runs ("" when none matches): neither tool's file names
  // the GPU, so the header says how to read the file back (`--hardware NAME`).
  std::string preset;
  std::vector<std::string> machine_sets;  // the cluster's topology keys, for the header
};

// The launch text alone: throws ConfigError (one line: the key, why, the fix) for what the
// target cannot express that the exporter knows by name.
std::string export_megatron(const Plan& plan, const ExportOptions& options);
std::string export_torchtitan(const Plan& plan, const ExportOptions& options);

// Refuses a `tool` other than "megatron" and "torchtitan", naming both.
void check_export_tool(const std::string& tool);

// The whole export: the text of `tool`'s exporter, imported back (with the plan's GPU preset,
// software release and cluster topology) and compared with `plan`: a key that differs is refused
// by name. Throws ConfigError.
std::string export_plan(const std::string& tool, const Plan& plan);

}  // namespace stepsim::importers
