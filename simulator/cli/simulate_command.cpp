#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/engine/simulate.hpp"
#include "simulator/report/sim_report.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

int run_simulate(const Plan& plan, bool json, bool quiet) {
  SimOptions options;
  options.quiet = quiet;
  const SimResult result = simulate(plan, options);
  // A synthetic pipeline has no model to roofline; its report compares against nothing.
  const bool model = plan.workload.kind == WorkloadKind::Model;
  const Roofline roof = model ? compute_roofline(plan) : Roofline{};
  if (json) {
    auto j = sim_json(plan, result, roof);
    if (!model) j["roofline"] = nullptr;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << sim_text(plan, result, roof);
  }
  return 0;
}

}  // namespace stepsim
