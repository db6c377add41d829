// A share written as a percentage with one decimal, the way every text report prints them.
#pragma once

#include <fmt/format.h>

#include <string>

namespace stepsim {

inline std::string pct(double share) { return fmt::format("{:.1f} %", 100.0 * share); }

}  // namespace stepsim
