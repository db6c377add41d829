// The sweep manifest (DIR/sweep.json) that `stepsim sweep --collect DIR` trusts, and the job lines
// written from it (one per point, never holding a line break).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/sweep/manifest.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stepsim::fuzz::write_input("sweep.json", data, size);
  try {
    const stepsim::sweep::Manifest m = stepsim::sweep::read_manifest(stepsim::fuzz::scratch_dir());
    const auto grid = stepsim::sweep::cartesian_product(m.axes);
    for (const auto& p : grid) {
      const std::string line = stepsim::sweep::point_shell_line(m, p, "/", "/out", int(grid.size()));
      if (line.find('\n') != std::string::npos) std::abort();  // injection: a second command
    }
  } catch (const stepsim::ConfigError&) {
  }
  return 0;
}
