#include "simulator/report/command_json.hpp"

#include "simulator/report/roofline_report.hpp"
#include "simulator/report/routing_report.hpp"
#include "simulator/report/sim_report.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim {

nlohmann::json roofline_command_json(const Plan& plan) {
  auto j = roofline_json(plan, compute_roofline(plan));
  j["memory"] = memory_estimate_json(estimate_memory(plan));
  add_plan_inputs(j, plan);
  return j;
}

nlohmann::json simulate_command_json(const Plan& plan, const SimResult& result, std::optional<double> mean_load_step_s) {
  // A synthetic pipeline has no model to roofline; its report compares against nothing.
  const bool model = plan.workload.kind == WorkloadKind::Model;
  auto j = sim_json(plan, result, model ? compute_roofline(plan) : Roofline{});
  if (!model) j["roofline"] = nullptr;
  if (model) j["routing"] = routing_json(plan, result, mean_load_step_s);
  return j;
}

}  // namespace stepsim
