#include "simulator/runs/simulate.hpp"

#include <stdexcept>

#include "simulator/runs/baseline_step.hpp"
#include "simulator/engine/engine.hpp"
#include "workloads/model/model_workload.hpp"
#include "workloads/synthetic/synthetic_workload.hpp"

namespace stepsim {

namespace {

// A workload and the platform its GPU ids refer to.
struct Replay {
  std::unique_ptr<engine::Workload> workload;
  PlatformSpec platform;
};

Replay make_replay(const Plan& plan) {
  switch (plan.workload.kind) {
    case WorkloadKind::Synthetic: return {make_synthetic_workload(plan), synthetic_platform(plan)};
    case WorkloadKind::Model: {
      auto w = std::make_unique<ModelWorkload>(plan);
      PlatformSpec spec = w->platform();
      return {std::move(w), std::move(spec)};
    }
  }
  throw std::logic_error("unknown workload kind");
}

}  // namespace

SimResult simulate(const Plan& plan, const SimOptions& options) {
  // A perturbed step is compared with the same plan unperturbed (run first, in a child process).
  const double baseline_s = plan.scenario.perturbed() ? simulate_baseline_step(plan) : -1;
  const Replay replay = make_replay(plan);
  SimOptions opt = options;
  opt.jitter_sigma = plan.scenario.jitter_sigma;
  opt.seed = plan.scenario.seed;
  SimResult r = engine::run(replay.platform, *replay.workload, opt);
  r.stragglers.baseline_step_s = baseline_s;
  r.schedule = to_string(plan.parallel.schedule);
  return r;
}

}  // namespace stepsim
