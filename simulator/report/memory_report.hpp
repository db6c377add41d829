// The memory part of `stepsim simulate`: per rank the peak bytes along the replayed step, when it
// happens, what it holds at that moment, and whether it fits hardware.memory_GiB.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// `simulate --strict` exits with this code when some GPU's peak exceeds hardware.memory_GiB.
inline constexpr int kPlanDoesNotFitExit = 3;

double memory_capacity_bytes(const Plan& plan);
// The rank with the highest peak (lowest id on ties); null when the result has no memory.
const RankResult* memory_peak_rank(const SimResult& r);
// True when every simulated rank's peak fits (or when memory was not modelled).
bool memory_fits(const Plan& plan, const SimResult& r);

nlohmann::json memory_json(const Plan& plan, const SimResult& r);  // null without memory
std::string memory_text(const Plan& plan, const SimResult& r);     // empty without memory

}  // namespace stepsim
