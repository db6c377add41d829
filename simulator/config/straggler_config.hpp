// scenario.stragglers: a YAML list of maps, one slow or faulty piece of hardware each. Items are
// checked key by key (unknown keys, types, ranges, from_s < to_s) when the config is read, and
// against the cluster (GPU and node ids, the NIC lent to a down one) once the plan is complete.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

// Checks the list under `key` (e.g. scenario.stragglers) read from `where`; throws ConfigError
// naming the item key, e.g. "FILE: scenario.stragglers[1].clock: must be greater than zero, ...".
// Returns the list with numbers normalised.
nlohmann::json check_straggler_list(const std::string& where, const std::string& key, const nlohmann::json& list);

// The checked list as Plan values.
std::vector<Straggler> parse_stragglers(const nlohmann::json& checked);

// Ids against the cluster the workload runs on, the GPU lending its NIC, and reduced mode (a
// perturbed GPU breaks its symmetry). Throws ConfigError naming plan.source.
void validate_stragglers(const Plan& plan);

// The GPUs and nodes of the platform the plan's workload runs on (the synthetic pipeline puts each
// rank on its own one-GPU node).
int64_t platform_nodes(const Plan& plan);
int64_t platform_gpus_per_node(const Plan& plan);

}  // namespace stepsim
