// `stepsim import megatron|torchtitan FILE [-o PLAN.yaml] [--gpus N]`: reads another tool's job
// (simulator/importers/), checks that the plan it makes loads, and writes it commented.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/importers/import_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"

namespace stepsim {

int run_import(const ImportArgs& a) {
  importers::check_import_tool(a.tool);
  const importers::ImportOptions options = importers::import_options(a.gpus, a.gpus_per_node, a.hardware);
  if (!a.out.empty()) io::check_output_path(a.out, "-o", io::kDashIsStdout);
  const importers::ImportedPlan plan = importers::import_file(a.tool, a.file, options);
  // A relative model.config_json is written against the plan's own folder, as configs read it.
  std::string base;
  if (!a.out.empty() && !io::is_stdout(a.out)) {
    std::error_code ec;
    base = std::filesystem::absolute(std::filesystem::path(a.out), ec).parent_path().lexically_normal().string();
    if (ec) base.clear();
  }
  const std::string yaml = importers::plan_yaml(plan, base);
  importers::check_imported_plan(plan, yaml, base);
  if (a.out.empty()) std::cout << yaml;
  else io::write_output_file(a.out, "-o", io::kDashIsStdout, yaml);
  if (!a.quiet) {
    for (const auto& n : plan.notes) std::fprintf(stderr, "note: %s\n", io::printable(n).c_str());
    if (const std::string n = importers::not_imported_note(plan); !n.empty())
      std::fprintf(stderr, "note: %s\n", n.c_str());
  }
  return 0;
}

}  // namespace stepsim
