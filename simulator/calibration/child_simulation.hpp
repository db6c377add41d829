// SimGrid allows one simulation per process; commands that need several (explain) run each in a
// forked child, which sends back the step's split through a pipe. The parent never starts SimGrid.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::calib {

struct StepSplit {
  double step_time_s = 0;
  double compute_s = 0;  // means over the simulated ranks, as `simulate --json` reports them
  double exposed_comm_s = 0;
  double bubble_s = 0;
};

// Simulates `plan` quietly in a child process. Throws std::runtime_error with the child's message
// if it fails (a ConfigError in the child comes back as its text).
StepSplit simulate_in_child(const Plan& plan);

}  // namespace stepsim::calib
