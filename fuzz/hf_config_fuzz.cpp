// The Hugging Face config.json reader, reached as a user does: a config naming it in
// model.config_json (its keys then go through the same checks as YAML ones).
#include <cstdint>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stepsim::fuzz::write_input("config.json", data, size);
  static const std::string rest =
      "train: {global_batch: 64, seq_len: 4096}\nparallel: {pp: 1, ep: 1, microbatches: 1}\nschedule: 1f1b\n"
      "hardware: {fp8_tflops: 1456.6, bf16_tflops: 757.7, ib_GBps: 50, nvlink_GBps: 160}\n"
      "cluster: {nodes: 8, gpus_per_node: 8}\n";
  try {
    stepsim::load_plan_from_string("model: {config_json: " + path + "}\n" + rest, "fuzz.yaml");
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
