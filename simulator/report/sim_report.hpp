// Renders a simulated step with the roofline of the same plan beside it: as the JSON object of
// `stepsim simulate --json` (keys documented in the README) or as a readable report that explains,
// in words, where the simulation and the roofline part ways.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

// min / mean / max over ranks of one per-rank quantity.
struct Spread {
  double min = 0, mean = 0, max = 0;
};

struct StepSummary {
  Spread step, compute, exposed, bubble;
  int64_t critical_rank = 0;  // the rank with the most compute + exposed comm (least bubble)
};

StepSummary summarize(const SimResult& r);

nlohmann::json sim_json(const Plan& plan, const SimResult& r, const Roofline& roof);
std::string sim_text(const Plan& plan, const SimResult& r, const Roofline& roof);

// Where the critical GPU's time goes: compute by layer kind and class (GEMM, attention, memory-bound,
// launch) and exposed communication by kind (null / empty for the synthetic workload).
nlohmann::json compute_breakdown_json(const Plan& plan, const SimResult& r);
std::string compute_breakdown_text(const Plan& plan, const SimResult& r);

// Sentences attributing the difference between simulated and roofline step time (empty when the
// two agree within 2 %).
std::string explain_difference(const Plan& plan, const SimResult& r, const Roofline& roof);

}  // namespace stepsim
