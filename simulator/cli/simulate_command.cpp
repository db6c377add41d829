#include "simulator/cli/commands.hpp"
#include "simulator/config/config_error.hpp"

namespace stepsim {

int run_simulate(const Plan& plan, bool, bool) {
  throw ConfigError(plan.source + ": simulate: the replay engine is not built yet; use `stepsim roofline`");
}

}  // namespace stepsim
