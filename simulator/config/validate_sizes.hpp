// Size limits a plan must respect before any stage computes with it: the model's parameter and
// byte counts must fit int64 (every product of model dimensions is formed in int64 downstream).
// Each limit is one error line that names the key, the limit and why. (The replay's own size is
// checked on what it will run: check_replay_size, simulator/runs/simulate.hpp.)
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

// Throws ConfigError (naming plan.source) when a size is out of reach. Call after the per-key
// bounds and the structural checks (divisibility) of validate_plan.
void validate_sizes(const Plan& plan);

}  // namespace stepsim
