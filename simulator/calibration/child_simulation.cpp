#include "simulator/calibration/child_simulation.hpp"

#include "simulator/runs/child_run.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim::calib {

StepSplit simulate_in_child(const Plan& plan) {
  return run_in_child_value<StepSplit>([&] {
    SimOptions o;
    o.quiet = true;
    const SimResult r = simulate(plan, o);
    StepSplit s;
    s.step_time_s = r.step_time_s;
    for (const RankResult& rr : r.ranks) {
      s.compute_s += rr.compute_s / double(r.ranks.size());
      s.exposed_comm_s += rr.exposed_comm_s / double(r.ranks.size());
      s.bubble_s += rr.bubble_s / double(r.ranks.size());
    }
    return s;
  });
}

}  // namespace stepsim::calib
