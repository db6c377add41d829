// `stepsim export megatron|torchtitan PLAN.yaml [--set k=v]... [-o FILE]`: the job another tool runs
// for a plan (simulator/importers/exporters.hpp), checked by importing it back, written to a
// temporary file and renamed (or to stdout).
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/io/output_file.hpp"

namespace stepsim {

int run_export(const ExportArgs& a) {
  importers::check_export_tool(a.tool);
  // The plan is read first, so an -o naming it (or a file it reads) is refused as an input.
  const Plan plan = load_plan(a.plan, a.sets);
  if (!a.out.empty()) io::check_output_path(a.out, "-o", io::kDashIsStdout);
  const std::string text = importers::export_plan(a.tool, plan);
  if (a.out.empty()) std::cout << text;
  else io::write_output_file(a.out, "-o", io::kDashIsStdout, text);
  return 0;
}

}  // namespace stepsim
