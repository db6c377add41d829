#include "vocabulary/plan_names.hpp"

namespace stepsim {

// A Schedule's name is a string literal or the schedule registry's (schedules/registry.cpp).
const char* to_string(Schedule s) { return s.name().data(); }
std::string to_string(Recompute r) {
  for (const auto& n : kRecomputeShorthands)
    if (n.value == r) return n.name;
  std::string modules;
  for (const auto& n : kRecomputeModules)
    if (r.has(n.value)) modules += (modules.empty() ? "" : " ") + std::string(n.name);
  return modules;
}
const char* to_string(MoeDispatcher d) { return name_of(kMoeDispatchers, d); }
const char* to_string(Routing r) { return name_of(kRoutings, r); }
const char* to_string(SimMode m) { return name_of(kSimModes, m); }
const char* to_string(SimFidelity f) { return name_of(kSimFidelities, f); }
const char* to_string(Precision p) { return name_of(kPrecisions, p); }
const char* to_string(MomentDtype d) { return name_of(kMomentDtypes, d); }
const char* to_string(ReduceDtype d) { return name_of(kReduceDtypes, d); }
const char* to_string(RouterDtype d) { return name_of(kRouterDtypes, d); }
const char* to_string(FlexBackend b) { return name_of(kFlexBackends, b); }
const char* to_string(CpCommType t) { return name_of(kCpCommTypes, t); }
const char* to_string(HiddenAct a) { return name_of(kHiddenActs, a); }
const char* to_string(Norm n) { return name_of(kNorms, n); }
const char* to_string(ComputeModel c) { return name_of(kComputeModels, c); }
const char* to_string(CudaGraphs g) { return name_of(kCudaGraphs, g); }
std::string graph_scope_text(uint8_t scope) {
  std::string out;
  for (const auto& n : kGraphScopes)
    if (scope & n.value) {
      if (!out.empty()) out += ',';
      out += n.name;
    }
  return out;
}
const char* to_string(AttentionKernel k) { return name_of(kAttentionKernels, k); }
const char* to_string(PipelineSplit p) { return name_of(kPipelineSplits, p); }
const char* to_string(MegatronFlops f) { return name_of(kMegatronFlops, f); }
const char* to_string(Fp8Recipe r) { return name_of(kFp8Recipes, r); }
const char* precision_name(const TrainConfig& t) {
  if (t.precision == Precision::BF16) return "bf16";
  for (const auto& n : kTrainPrecisions)
    if (n.precision == Precision::FP8 && n.low_precision == t.low_precision) return n.name;
  return "?";
}

std::string precision_text(const TrainConfig& t) {
  std::string out = precision_name(t);
  if (t.fp8_recipe_applies())
    out += std::string(" (") + to_string(t.fp8_recipe) + " scaling)";
  return out;
}

bool is_deepseek_v3(const ModelConfig& m) {
  return m.hidden_size == 7168 && m.num_hidden_layers == 61 && m.n_routed_experts == 256 &&
         m.num_experts_per_tok == 8 && m.kv_lora_rank == 512 && m.vocab_size == 129280;
}
const char* to_string(Topology t) { return name_of(kTopologies, t); }

}  // namespace stepsim
