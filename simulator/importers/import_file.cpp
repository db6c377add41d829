#include "simulator/importers/import_file.hpp"

#include <cstdint>

#include "simulator/config/config_loader.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::importers {
namespace {

// A count as typed: 0 when not given (the importer then reads the file), else 1..max; a 0, a sign,
// other characters or an overflowing number are refused with the text as given.
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

ImportOptions import_options(const std::string& gpus, const std::string& gpus_per_node, const std::string& hardware,
                             const ImportOptionNames& names) {
  ImportOptions options;
  options.gpus = count_option(gpus, names.gpus, "the number of GPUs", int64_t(1) << 24);
  options.gpus_per_node = count_option(gpus_per_node, names.gpus_per_node, "the GPUs of one node", 4096);
  if (!hardware.empty()) {
    try {
      check_override("hardware.preset=" + hardware);
    } catch (const ConfigError& e) {
      const std::string why = e.what();
      throw ConfigError(names.hardware + " " + io::shortened(hardware, 40) + why.substr(why.find(':', why.find("preset"))));
    }
    options.preset = hardware;
  }
  return options;
}

void check_import_tool(const std::string& tool) {
  if (tool != "megatron" && tool != "torchtitan")
    throw ConfigError("import " + io::shortened(tool, 40) + ": unknown source; use stepsim import megatron FILE "
                      "(a Megatron-LM launch script) or stepsim import torchtitan FILE.toml");
}

ImportedPlan import_file(const std::string& tool, const std::string& path, const ImportOptions& options) {
  check_import_tool(tool);
  const std::string text = io::read_input_file(path, "import " + tool, io::kMiB);
  return tool == "megatron" ? import_megatron(text, path, options) : import_torchtitan(text, path, options);
}

}  // namespace stepsim::importers
