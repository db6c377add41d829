// Small helpers the exporters share: the refusal's one line and number texts.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/plan.hpp"

namespace stepsim::importers {

// "PLAN.yaml: schedule = dualpipev: Megatron-LM runs ...; use ..." (the --set that gave the key
// where one did).
[[noreturn]] inline void refuse_export(const Plan& plan, const std::string& key, const std::string& value,
                                       const std::string& why_and_fix) {
  throw ConfigError(origin_of(plan, key) + ": " + key + " = " + value + ": " + why_and_fix);
}

// A number as a launch writes it: integers without a point, others with the fewest digits that
// read back the same.
inline std::string number_text(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", x);
    return b;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    char b[40];
    std::snprintf(b, sizeof b, "%.*g", digits, x);
    if (std::strtod(b, nullptr) == x) return b;
  }
  return std::to_string(x);
}

}  // namespace stepsim::importers
