// The `routing` part of `stepsim simulate`: how uneven the expert loads were (max / mean per MoE
// layer, for the busiest expert and the busiest GPU of an EP group), what they cost against the
// same step with every expert at its mean load, and which GPUs the others waited for.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "simulator/config/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// Step time of the same plan with every expert at its mean load (the routing's node statistics
// and everything else kept), simulated in a forked child (SimGrid runs one engine per process).
// nullopt when routing is balanced already, or the child failed. Checks a load file first, so a bad
// one stops before any replay; says what it does on stderr unless `quiet`.
std::optional<double> mean_load_step_s(const Plan& plan, bool quiet);

nlohmann::json routing_json(const Plan& plan, const SimResult& r, std::optional<double> mean_load_step_s);
std::string routing_text(const Plan& plan, const SimResult& r, std::optional<double> mean_load_step_s);

}  // namespace stepsim
