#include "simulator/runs/mean_load_step.hpp"

#include <cstdio>
#include <stdexcept>

#include "simulator/runs/child_run.hpp"
#include "simulator/runs/simulate.hpp"
#include "workloads/routing/expert_loads.hpp"
#include "workloads/routing/load_file.hpp"

namespace stepsim {

std::optional<double> mean_load_step_s(const Plan& plan, bool quiet) {
  if (!uneven_loads(plan) || plan.workload.kind != WorkloadKind::Model) return std::nullopt;
  // A bad load file fails here, in one line, before any replay.
  if (plan.scenario.routing == Routing::File) (void)read_load_file(plan);
  if (!quiet) std::fprintf(stderr, "stepsim: simulating the mean-load step for the routing report\n");
  Plan base = plan;
  base.scenario.mean_loads_only = true;
  try {
    const double step = run_in_child_value<double>([&] {
      SimOptions options;
      options.quiet = true;
      return simulate(base, options).step_time_s;
    });
    if (step > 0) return step;
  } catch (const std::runtime_error&) {
    // The report then says the slowdown is unknown; the main replay's result stands.
  }
  return std::nullopt;
}

}  // namespace stepsim
