#include "simulator/report/stage_layers_report.hpp"

#include "schedules/registry.hpp"
#include "workloads/layers/layer_partition.hpp"

namespace stepsim {

StageLayersView stage_layers_view(const Plan& plan) {
  StageLayersView v;
  const auto schedule = sched::make_unchecked_schedule(plan);
  for (const StageLayers& s : partition_layers(plan)) v.per_stage.push_back(s.count);
  const SplitOrigin origin = split_origin(plan);
  switch (origin.kind) {
    case SplitOrigin::Given: v.source = "parallel.stage_layers, as given"; break;
    case SplitOrigin::Framework:
      v.source = std::string("as ") +
                 (plan.software.pipeline_split == PipelineSplit::Megatron ? "Megatron-Core" : "torchtitan") +
                 " splits them, software.pipeline_split " + to_string(plan.software.pipeline_split);
      break;
    case SplitOrigin::Balanced:
      v.source = origin.refusal.empty() ? "balanced by stepsim at speed-of-light costs"
                                        : "balanced by stepsim at speed-of-light costs; " + origin.refusal;
      break;
  }
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
  return "layers per stage in layer order (" + v.source + "): " + counts_text(v.per_stage) +
         "; per pipeline rank: " + counts_text(v.per_rank) + "\n";
}

}  // namespace stepsim
