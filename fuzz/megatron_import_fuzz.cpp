// `stepsim import megatron`: the bash reader and the argument mapping, then the written plan's
// check. The input is the launch script. Any outcome but a plan or a ConfigError is a bug.
#include <cstdint>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/importers/importers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  stepsim::importers::ImportOptions options;
  // Half the inputs size the world themselves (torchrun), half are given 64 GPUs.
  if (size % 2 == 0) options.gpus = 64;
  try {
    const auto plan = stepsim::importers::import_megatron(text, "fuzz.sh", options);
    const std::string yaml = stepsim::importers::plan_yaml(plan, "");
    // The plan's check parses YAML in a forked, time-limited child (as the binary does): about 8
    // inputs/s. One input in eight takes it; the rest keep the reader's speed.
    if (size % 8 == 0) stepsim::importers::check_imported_plan(plan, yaml, "");
    (void)stepsim::importers::not_imported_note(plan);
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
