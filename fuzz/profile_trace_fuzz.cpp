// The PyTorch-profiler trace reader (plain or gzipped Chrome trace JSON).
#include <cstdint>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/io/profile_trace.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stepsim::fuzz::write_input("trace.json", data, size);
  try {
    (void)stepsim::traces::read_profile_trace(path);
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
