// The JSON objects `stepsim roofline --json` and `stepsim simulate --json` print, built in one place
// for the command line and the Python module (python/), so the two can never differ.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// `stepsim roofline --json`: the closed forms, the static memory estimate and the plan's inputs.
nlohmann::json roofline_command_json(const Plan& plan);

// `stepsim simulate --json`: the replayed step with the roofline of the same plan beside it (null
// for the synthetic workload) and, for a model, the routing report; `mean_load_step_s` as
// mean_load_step_s (simulator/runs/mean_load_step.hpp) returned it.
nlohmann::json simulate_command_json(const Plan& plan, const SimResult& result, std::optional<double> mean_load_step_s);

}  // namespace stepsim
