// `stepsim import megatron|torchtitan FILE [-o PLAN.yaml] [--gpus N]`: reads another tool's job
// (simulator/importers/), checks that the plan it makes loads, and writes it commented.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/importers/importers.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"

namespace stepsim {

namespace {

// A count option as typed: 0 when not given (the importer then reads the file), else 1..max; a 0,
// a sign, other characters or an overflowing number are refused with the text as given.
int64_t count_option(const std::string& text, const std::string& flag, const std::string& what, int64_t max) {
  if (text.empty()) return 0;
  const auto refuse = [&] {
    throw ConfigError(flag + " " + io::shortened(io::printable(text), 40) + ": give " + what + ", 1 to " +
                      std::to_string(max));
  };
  if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) refuse();
  const int64_t n = std::stoll(text);
  if (n < 1 || n > max) refuse();
  return n;
}

}  // namespace

int run_import(const ImportArgs& a) {
  if (a.tool != "megatron" && a.tool != "torchtitan")
    throw ConfigError("import " + io::shortened(a.tool, 40) + ": unknown source; use stepsim import megatron FILE "
                      "(a Megatron-LM launch script) or stepsim import torchtitan FILE.toml");
  importers::ImportOptions options;
  options.gpus = count_option(a.gpus, "--gpus", "the number of GPUs", int64_t(1) << 24);
  options.gpus_per_node = count_option(a.gpus_per_node, "--gpus-per-node", "the GPUs of one node", 4096);
  if (!a.hardware.empty()) {
    try {
      check_override("hardware.preset=" + a.hardware);
    } catch (const ConfigError& e) {
      const std::string why = e.what();
      throw ConfigError("--hardware " + io::shortened(a.hardware, 40) + why.substr(why.find(':', why.find("preset"))));
    }
    options.preset = a.hardware;
  }
  if (!a.out.empty()) io::check_output_path(a.out, "-o", io::kDashIsStdout);
  const std::string text = io::read_input_file(a.file, "import " + a.tool, io::kMiB);
  const importers::ImportedPlan plan = a.tool == "megatron" ? importers::import_megatron(text, a.file, options)
                                                            : importers::import_torchtitan(text, a.file, options);
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
