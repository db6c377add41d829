// One training step, simulated: picks the workload (plan.workload.kind) and the schedule
// (plan.parallel.schedule), replays it in SimGrid and returns the per-rank split. One call per
// process (SimGrid allows one Engine per process).
#pragma once

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

SimResult simulate(const Plan& plan, const SimOptions& options = {});

}  // namespace stepsim
