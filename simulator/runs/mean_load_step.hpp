// The routing report's reference: the same step with every expert at its mean load.
#pragma once

#include <optional>

#include "vocabulary/plan.hpp"

namespace stepsim {

// Step time of the same plan with every expert at its mean load (the routing's node statistics
// and everything else kept), simulated in a forked child (SimGrid runs one engine per process).
// nullopt when routing is balanced already, or the child failed. Checks a load file first, so a bad
// one stops before any replay; says what it does on stderr unless `quiet`.
std::optional<double> mean_load_step_s(const Plan& plan, bool quiet);

}  // namespace stepsim
