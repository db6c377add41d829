#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/roofline/roofline.hpp"
#include "simulator/report/roofline_report.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json) {
  const Roofline r = compute_roofline(plan);
  const MemoryEstimate memory = estimate_memory(plan);
  if (json) {
    auto j = roofline_json(plan, r);
    j["memory"] = memory_estimate_json(memory);
    add_plan_inputs(j, plan);
    std::cout << io::json_text(j, 2) << "\n";
  } else {
    std::cout << roofline_text(plan, r) << "\n" << memory_estimate_text(memory);
  }
  return 0;
}

}  // namespace stepsim
