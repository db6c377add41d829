// Renders a Roofline as the JSON object of `stepsim roofline --json` (keys documented in the
// README) and as the readable table printed by default.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

nlohmann::json roofline_json(const Plan& plan, const Roofline& r);
std::string roofline_text(const Plan& plan, const Roofline& r);

}  // namespace stepsim
