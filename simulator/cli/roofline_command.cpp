#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/report/command_json.hpp"
#include "simulator/roofline/roofline.hpp"
#include "simulator/report/roofline_report.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json) {
  if (json) std::cout << io::json_text(roofline_command_json(plan), 2) << "\n";
  else std::cout << roofline_text(plan, compute_roofline(plan)) << "\n" << memory_estimate_text(estimate_memory(plan));
  return 0;
}

}  // namespace stepsim
