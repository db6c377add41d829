#include "simulator/engine/simulate.hpp"

#include <stdexcept>

#include "simulator/engine/baseline_step.hpp"
#include "simulator/engine/engine.hpp"
#include "workloads/deepseek/model_workload.hpp"
#include "workloads/synthetic/synthetic_workload.hpp"

namespace stepsim {

namespace {

std::unique_ptr<engine::Workload> make_workload(const Plan& plan) {
  switch (plan.workload.kind) {
    case WorkloadKind::Synthetic: return make_synthetic_workload(plan);
    case WorkloadKind::Model: return std::make_unique<ModelWorkload>(plan);
  }
  throw std::logic_error("unknown workload kind");
}

}  // namespace

SimResult simulate(const Plan& plan, const SimOptions& options) {
  // A perturbed step is compared with the same plan unperturbed (run first, in a child process).
  const double baseline_s = plan.scenario.perturbed() ? simulate_baseline_step(plan) : -1;
  const std::unique_ptr<engine::Workload> workload = make_workload(plan);
  SimOptions opt = options;
  opt.jitter_sigma = plan.scenario.jitter_sigma;
  opt.seed = plan.scenario.seed;
  SimResult r = engine::run(*workload, opt);
  r.stragglers.baseline_step_s = baseline_s;
  r.schedule = to_string(plan.parallel.schedule);
  return r;
}

}  // namespace stepsim
