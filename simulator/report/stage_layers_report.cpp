#include "simulator/report/stage_layers_report.hpp"

#include "schedules/registry.hpp"
#include "workloads/layers/layer_partition.hpp"

namespace stepsim {

StageLayersView stage_layers_view(const Plan& plan) {
  StageLayersView v;
  const auto schedule = sched::make_unchecked_schedule(plan);
  for (const StageLayers& s : partition_layers(plan)) v.per_stage.push_back(s.count);
  v.given = !plan.parallel.stage_layers.empty();
  for (int64_t r = 0; r < plan.parallel.pp; ++r) {
    int64_t n = 0;
    for (int32_t c = 0; c < schedule->chunks_per_rank(); ++c)
      n += v.per_stage[size_t(schedule->layer_slot(schedule->stage_of(r, c)))];
    v.per_rank.push_back(n);
  }
  return v;
}

std::string counts_text(const std::vector<int64_t>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(counts[i]) + (j - i > 1 ? " x " + std::to_string(j - i) : "");
    i = j;
  }
  return out;
}

std::string stage_layers_text(const Plan& plan) {
  const StageLayersView v = stage_layers_view(plan);
  if (v.per_stage.size() <= 1) return "";
  return "layers per stage in layer order (" +
         std::string(v.given ? "parallel.stage_layers, as given" : "balanced by stepsim at speed-of-light costs") +
         "): " + counts_text(v.per_stage) + "; per pipeline rank: " + counts_text(v.per_rank) + "\n";
}

}  // namespace stepsim
