// The routing load-file reader (scenario.load_file): CSV when the input's first byte is even,
// JSON otherwise, for a small MoE model (layers 1..3 MoE, 8 experts).
#include <cstdint>
#include <string>

#include "vocabulary/config_error.hpp"
#include "workloads/routing/load_file.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool csv = data[0] % 2 == 0;
  stepsim::Plan plan;
  plan.source = "fuzz";
  plan.model.num_hidden_layers = 4;
  plan.model.first_k_dense_replace = 1;
  plan.model.n_routed_experts = 8;
  plan.scenario.routing = stepsim::Routing::File;
  plan.scenario.load_file = stepsim::fuzz::write_input(csv ? "loads.csv" : "loads.json", data + 1, size - 1);
  try {
    (void)stepsim::read_load_file(plan);
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
