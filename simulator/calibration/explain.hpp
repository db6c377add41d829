// The roofline-to-reality waterfall: the step time going from speed of light to the calibrated
// simulation one effect at a time, then the effects the capture cannot show, next to DeepSeek's
// reported step. Every bar is a simulation of the plan with one more effect switched on, or a
// stated formula; what is left to the reported step is shown as unexplained.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "simulator/calibration/child_simulation.hpp"
#include "vocabulary/plan.hpp"

namespace stepsim::calib {

struct WaterfallStep {
  std::string effect;
  double step_time_s = 0;  // the running total after this effect
  double delta_s = 0;      // what this effect adds
  enum class Kind { Total, Step, Unexplained } kind = Kind::Step;
  std::string how;  // "simulation: ..." or "formula: ..."
};

struct Explanation {
  std::vector<WaterfallStep> steps;  // in order; the last is the calibrated prediction
  double roofline_step_s = 0;        // the closed-form speed-of-light step, for reference
  double sol_sim_step_s = 0;         // the simulated step with every effect off
  double calibrated_sim_s = 0;       // the simulated step with the plan's hardware profile
  double prediction_s = 0;           // after every modelled effect
  double reported_step_s = 0;        // train.reported_step_s, or DeepSeek-V3's 180K GPU-h per T tokens; 0 = none
  double unexplained_s = 0;          // reported - prediction (0 without a reported step)
};

using SimulateFn = std::function<StepSplit(const Plan&)>;

// `calibrated`: the plan with its hardware profile loaded. `sim` runs one simulation (in a child
// process: simulate_in_child). Replays are forced to reduced mode (one data-parallel replica).
// `routing_sim` false skips the routing-imbalance replay (it replays a whole EP group per stage,
// minutes instead of a second); its bar is then 0, labelled as skipped.
Explanation explain(const Plan& calibrated, const SimulateFn& sim, bool routing_sim = true);

// The plan with every calibration key at speed of light (efficiencies 1, no latency, no SM tax,
// no non-matmul cost).
Plan speed_of_light(const Plan& plan);

}  // namespace stepsim::calib
