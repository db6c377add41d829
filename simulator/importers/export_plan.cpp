// The whole `stepsim export`: the exporter's text, read back by the importer and compared with the
// plan key by key (plan_fields.hpp), so a plan the target cannot express is refused by name.
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/importers/export_text.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/importers/importers.hpp"
#include "simulator/importers/plan_fields.hpp"
#include "simulator/io/json_text.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::importers {
namespace {

const char* tool_name(const std::string& tool) { return tool == "megatron" ? "Megatron-LM" : "torchtitan"; }

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  std::string all = hardware_preset_names() + ", ";
  for (size_t start = 0, comma; (comma = all.find(", ", start)) != std::string::npos; start = comma + 2)
    out.push_back(all.substr(start, comma - start));
  return out;
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "(none)";
  return v.is_string() ? v.get<std::string>() : io::json_text(v);
}

struct RoundTrip {
  std::string yaml;  // the import of the export, as a plan
  ImportOptions options;
};

RoundTrip import_back(const std::string& tool, const std::string& text, const Plan& plan, const std::string& preset) {
  RoundTrip r;
  r.options.preset = preset.empty() ? "h100-sxm" : preset;
  if (tool == "torchtitan") r.options.gpus = plan.gpus(), r.options.gpus_per_node = plan.cluster.gpus_per_node;
  const std::string source = "the exported " + std::string(tool_name(tool)) + " job";
  ImportedPlan imported;
  try {
    imported = tool == "megatron" ? import_megatron(text, source, r.options) : import_torchtitan(text, source, r.options);
  } catch (const ConfigError& e) {
    throw ConfigError(plan.source + ": " + tool_name(tool) + " cannot run this plan as written (" + e.what() +
                      "); change the plan so that it can, or export to the other tool");
  }
  r.yaml = plan_yaml(imported, "");
  return r;
}

}  // namespace

void check_export_tool(const std::string& tool) {
  if (tool != "megatron" && tool != "torchtitan")
    throw ConfigError("export " + io::shortened(tool, 40) + ": unknown target; use stepsim export megatron PLAN.yaml "
                      "(a Megatron-LM launch script) or stepsim export torchtitan PLAN.yaml (a job TOML)");
}

std::string export_plan(const std::string& tool, const Plan& plan) {
  check_export_tool(tool);
  const auto run = [&](const ExportOptions& o) {
    return tool == "megatron" ? export_megatron(plan, o) : export_torchtitan(plan, o);
  };
  ExportOptions options;
  options.machine_sets = machine_overrides(plan);
  // The GPU preset whose hardware the plan runs: none is in either tool's file, so the header says
  // which to import it with (the first preset of the same GPU whose rates are the plan's).
  const RoundTrip first = import_back(tool, run(options), plan, "");
  for (const auto& name : preset_names()) {
    std::vector<std::string> sets = options.machine_sets;
    sets.push_back("hardware.preset=" + name);
    try {
      const Plan on = load_plan_from_string(first.yaml, "preset", sets);
      const HardwareConfig &a = on.hardware, &b = plan.hardware;
      if (a.name == b.name && a.bf16_tflops == b.bf16_tflops && a.fp8_tflops == b.fp8_tflops &&
          a.memory_GiB == b.memory_GiB && a.ib_GBps == b.ib_GBps && a.nvlink_GBps == b.nvlink_GBps) {
        options.preset = name;
        break;
      }
    } catch (const ConfigError&) {
    }
  }
  const std::string text = run(options);
  const RoundTrip back = import_back(tool, text, plan, options.preset);
  Plan again;
  try {
    again = load_plan_from_string(back.yaml, "the import of the exported job", options.machine_sets);
  } catch (const ConfigError& e) {
    throw ConfigError(plan.source + ": " + tool_name(tool) + "'s job of this plan does not load back (" + e.what() +
                      "); change the plan, or export to the other tool");
  }
  const auto differences = plan_differences(plan, again);
  if (!differences.empty()) {
    const FieldDifference& d = differences.front();
    refuse_export(plan, d.key, value_text(d.ours),
                  std::string(tool_name(tool)) + " has no setting for it: the exported job runs " + d.key + " = " +
                      value_text(d.theirs) + "; set " + d.key + "=" + value_text(d.theirs) +
                      (differences.size() > 1 ? " (and " + std::to_string(differences.size() - 1) + " more key(s) differ: " +
                                                    [&] {
                                                      std::string s;
                                                      for (size_t k = 1; k < differences.size() && k < 6; ++k)
                                                        s += (k > 1 ? ", " : "") + differences[k].key;
                                                      return s;
                                                    }() + ")"
                                              : "") +
                      ", or export to the other tool");
  }
  return text;
}

}  // namespace stepsim::importers
