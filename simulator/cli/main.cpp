// The `stepsim` command line: roofline, simulate and platform subcommands over one config.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "platforms/cluster_platform.hpp"
#include "simulator/cli/commands.hpp"
#include "simulator/config/config_error.hpp"
#include "simulator/config/config_loader.hpp"

namespace {

struct PlanArgs {
  std::string config;
  std::vector<std::string> sets;
  bool json = false;
  bool quiet = false;
  std::string trace;  // simulate: Chrome/Perfetto trace file
};

void add_plan_args(CLI::App* cmd, PlanArgs& a) {
  cmd->add_option("config", a.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  cmd->add_option("--set", a.sets, "override a config value: key=value (repeatable; value parsed as YAML)")
      ->allow_extra_args(false);
  cmd->add_flag("--json", a.json, "print one JSON object on stdout");
  cmd->add_flag("-q,--quiet", a.quiet, "no progress on stderr");
}

stepsim::Plan load(const PlanArgs& a) {
  return stepsim::load_plan(a.config.empty() ? stepsim::default_config_path() : a.config, a.sets);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stepsim: simulate one distributed LLM training step and its speed-of-light roofline"};
  app.require_subcommand(1);
  PlanArgs roof, sim, plat;
  std::string out_path;
  auto* roofline = app.add_subcommand("roofline", "speed-of-light step time of a plan (closed forms)");
  add_plan_args(roofline, roof);
  auto* simulate = app.add_subcommand("simulate", "replay the step on a SimGrid platform");
  add_plan_args(simulate, sim);
  simulate->add_option("--trace", sim.trace, "write a Chrome/Perfetto trace of every op to this file");
  auto* platform = app.add_subcommand("platform", "write the SimGrid platform XML for a config's cluster");
  platform->add_option("config", plat.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  platform->add_option("--set", plat.sets, "override a config value: key=value");
  platform->add_option("-o,--output", out_path, "output file (default: stdout)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "stepsim: error: %s; see stepsim --help\n", e.what());
    return stepsim::kBadInputExit;
  }

  try {
    if (*roofline) return stepsim::run_roofline(load(roof), roof.json);
    if (*simulate) return stepsim::run_simulate(load(sim), sim.json, sim.quiet, sim.trace);
    if (*platform) {
      const auto xml = stepsim::platform_xml(stepsim::platform_spec(load(plat)));
      if (out_path.empty()) {
        std::cout << xml;
        return 0;
      }
      std::ofstream out(out_path);
      if (!(out << xml)) throw stepsim::ConfigError(out_path + ": cannot write the platform file; check the path");
      return 0;
    }
  } catch (const stepsim::ConfigError& e) {
    std::fprintf(stderr, "stepsim: error: %s\n", e.what());
    return stepsim::kBadInputExit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stepsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
