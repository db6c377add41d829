// The `routing` part of `stepsim simulate`: how uneven the expert loads were (max / mean per MoE
// layer, for the busiest expert and the busiest GPU of an EP group), what they cost against the
// same step with every expert at its mean load, and which GPUs the others waited for.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// `mean_load_step_s`: the same step with every expert at its mean load
// (simulator/runs/mean_load_step.hpp); nullopt when unknown or routing is balanced.
nlohmann::json routing_json(const Plan& plan, const SimResult& r, std::optional<double> mean_load_step_s);
std::string routing_text(const Plan& plan, const SimResult& r, std::optional<double> mean_load_step_s);

}  // namespace stepsim
