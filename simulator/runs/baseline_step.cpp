#include "simulator/runs/baseline_step.hpp"

#include "simulator/runs/child_run.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim {

Plan unperturbed(const Plan& plan) {
  Plan p = plan;
  p.scenario.stragglers.clear();
  p.scenario.jitter_sigma = 0;
  p.sim.mode = SimMode::Auto;
  return p;
}

double simulate_baseline_step(const Plan& plan) {
  const Plan base = unperturbed(plan);
  return run_in_child_value<double>([&] {
    SimOptions opt;
    opt.quiet = true;
    return simulate(base, opt).step_time_s;
  });
}

}  // namespace stepsim
