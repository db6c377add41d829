// A loaded Plan as the config keys a launch decides, each with its effective value (a default
// spelled out: num_key_value_heads 0 is the head count, virtual_stages 0 the schedule's, an empty
// stage_layers stepsim's own balance), so two plans that run the same step compare equal key by
// key. `stepsim export` compares a plan with the import of its own export this way (a key that
// differs is one the target cannot express), and the round-trip tests do the same.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim::importers {

struct PlanField {
  std::string key;      // dotted config key ("parallel.tp"); a few name a derived value ("parallel.stage_layers")
  nlohmann::json value;
  friend bool operator==(const PlanField&, const PlanField&) = default;
};

// Every compared key of `plan`, in a fixed order. The machine (hardware.*, the cluster's topology
// keys) is left out: neither Megatron-LM's arguments nor a torchtitan job name it. So is how
// stepsim replays the step (sim.*), and what annotates a plan rather than changes its step:
// model.name, train.reported_step_s.
std::vector<PlanField> launch_fields(const Plan& plan);

struct FieldDifference {
  std::string key;
  nlohmann::json ours, theirs;
};

// The keys whose values differ, in launch_fields' order.
std::vector<FieldDifference> plan_differences(const Plan& ours, const Plan& theirs);

// The machine keys of `plan` that differ from a config's defaults, as --set texts
// ("cluster.nvlink_domain=64"), so a plan loaded elsewhere can be put on the same machine.
std::vector<std::string> machine_overrides(const Plan& plan);

}  // namespace stepsim::importers
