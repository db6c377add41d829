#include "simulator/engine/simulate.hpp"

#include <stdexcept>

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
  const std::unique_ptr<engine::Workload> workload = make_workload(plan);
  SimResult r = engine::run(*workload, options);
  r.schedule = to_string(plan.parallel.schedule);
  return r;
}

}  // namespace stepsim
