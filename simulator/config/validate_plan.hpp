// Cross-key checks that a parsed Plan describes a plan that can run (divisibility, schedule limits).
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

// Throws ConfigError naming the file, the key and a fix.
void validate_plan(const Plan& plan);

}  // namespace stepsim
