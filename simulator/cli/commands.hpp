// The work behind each subcommand, apart from argument parsing so tests can call it.
#pragma once

#include <string>

#include "simulator/config/plan.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json);
// `trace_path` empty: no trace.
int run_simulate(const Plan& plan, bool json, bool quiet, const std::string& trace_path = "");

}  // namespace stepsim
