// The `stragglers` part of the simulate report: what was perturbed, the step-time impact against
// the same plan unperturbed, who waited for whom, and the traffic a NIC that is down rerouted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

nlohmann::json stragglers_json(const Plan& plan, const SimResult& r);
// A few lines for the text report; empty when nothing was perturbed.
std::string stragglers_text(const Plan& plan, const SimResult& r);

}  // namespace stepsim
