// The config loader: YAML text and --set overrides. The input's first line is one --set
// (key=value), the rest the YAML config. Any outcome but a Plan or a ConfigError is a bug.
#include <cstdint>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto nl = text.find('\n');
  const std::string set = text.substr(0, nl == std::string::npos ? text.size() : nl);
  const std::string yaml = nl == std::string::npos ? "" : text.substr(nl + 1);
  try {
    stepsim::load_plan_from_string(yaml, "fuzz.yaml", {set});
  } catch (const stepsim::ConfigError&) {
  }
  try {
    stepsim::check_override(set);
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
