// The step a perturbed plan would take without its stragglers and jitter, for the report's
// step-time impact. SimGrid allows one Engine per process, so it runs in a forked child.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

// The plan with scenario.stragglers and scenario.jitter_sigma removed (sim.mode auto, so the
// model workload may replay it reduced: exact without perturbations).
Plan unperturbed(const Plan& plan);

// Simulates unperturbed(plan) in a forked child and returns its step time; call it before this
// process starts its own simulation. Throws std::runtime_error if the child fails.
double simulate_baseline_step(const Plan& plan);

}  // namespace stepsim
