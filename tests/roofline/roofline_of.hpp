// The roofline of the default plan with some keys changed, for the tests that move one input and
// check how the closed forms answer.
#pragma once

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim::test {

inline Roofline roof(const std::vector<std::string>& sets = {}) {
  return compute_roofline(load_plan(default_config_path(), sets));
}

constexpr double kRel = 1e-9;

}  // namespace stepsim::test
