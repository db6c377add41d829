#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/roofline/roofline.hpp"
#include "simulator/roofline/roofline_report.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json) {
  const Roofline r = compute_roofline(plan);
  if (json)
    std::cout << roofline_json(plan, r).dump(2) << "\n";
  else
    std::cout << roofline_text(plan, r);
  return 0;
}

}  // namespace stepsim
