// The work behind each subcommand, apart from argument parsing so tests can call it.
#pragma once

#include "simulator/config/plan.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json);
int run_simulate(const Plan& plan, bool json, bool quiet);

}  // namespace stepsim
