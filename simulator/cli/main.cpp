// The `stepsim` command line: roofline, simulate, sweep, platform, calibration, import and export subcommands.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <fstream>
#include <iostream>

#include "platforms/cluster_platform.hpp"
#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/io/shell_quote.hpp"
#include "simulator/plot/topology_chart.hpp"

namespace {

struct PlanArgs {
  std::string config;
  std::vector<std::string> sets;
  bool json = false;
  bool quiet = false;
  std::string trace;  // simulate: Chrome/Perfetto trace file
  std::string trace_ranks, trace_window;  // simulate: what the trace holds
  bool strict = false;  // simulate: exit 3 when the plan does not fit in memory
};

void add_plan_args(CLI::App* cmd, PlanArgs& a) {
  cmd->add_option("config", a.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  cmd->add_option("--set", a.sets, "override a config value: key=value (repeatable; value parsed as YAML)")
      ->allow_extra_args(false);
  cmd->add_flag("--json", a.json, "print one JSON object on stdout");
  cmd->add_flag("-q,--quiet", a.quiet, "no progress on stderr");
}

// Error messages hold user text (paths, values): one line of valid UTF-8 whatever bytes it held
// (control characters must not split the line or reach the terminal).
void print_error(const char* kind, const std::string& what) {
  std::fprintf(stderr, "stepsim: %s: %s\n", kind, stepsim::io::printable(what).c_str());
}

stepsim::Plan load(const PlanArgs& a) {
  stepsim::Plan plan = stepsim::load_plan(a.config.empty() ? stepsim::default_config_path() : a.config, a.sets);
  if (!a.quiet)
    for (const auto& note : plan.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stepsim: simulate one distributed LLM training step and its speed-of-light roofline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("stepsim ") + STEPSIM_VERSION);
  PlanArgs roof, sim, plat;
  std::string out_path;
  auto* roofline = app.add_subcommand("roofline", "speed-of-light step time of a plan (closed forms)");
  add_plan_args(roofline, roof);
  auto* simulate = app.add_subcommand("simulate", "replay the step on a SimGrid platform");
  add_plan_args(simulate, sim);
  simulate->add_option("--trace", sim.trace, "write a Chrome/Perfetto trace of every op to this file");
  simulate->add_option("--trace-ranks", sim.trace_ranks, "GPUs the trace holds, e.g. 0-7,64 (default: one per stage)");
  simulate->add_flag("--strict", sim.strict, "exit with code 3 when a GPU's memory peak exceeds hardware.memory_GiB");
  simulate->add_option("--trace-window", sim.trace_window, "seconds of the step the trace holds, e.g. 1.0:2.5");
  auto* platform = app.add_subcommand("platform", "write the SimGrid platform XML for a config's cluster");
  platform->add_option("config", plat.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  platform->add_option("--set", plat.sets, "override a config value: key=value");
  platform->add_option("-o,--output", out_path, "output file (default: stdout, unless --png is given)");
  std::string plat_png;
  platform->add_option("--png", plat_png, "draw the cluster (nodes, NVLink domains, leaves, spines, rails, faults) as a PNG");
  // Calibration: compare and calibrate read a real trace; their config defaults to the capture.
  PlanArgs cmp, cal, expl;
  std::string cmp_trace, cal_trace, cal_out, expl_png, expl_profile;
  auto* compare = app.add_subcommand("compare", "a real profiler trace vs speed of light and the simulated capture");
  compare->add_option("trace", cmp_trace, "PyTorch-profiler Chrome trace (e.g. DeepSeek's train.json)")->required();
  add_plan_args(compare, cmp);
  auto* calibrate = app.add_subcommand("calibrate", "derive a hardware profile from a real profiler trace");
  calibrate->add_option("trace", cal_trace, "PyTorch-profiler Chrome trace of the capture scenario")->required();
  add_plan_args(calibrate, cal);
  calibrate->add_option("-o,--output", cal_out, "profile YAML to write")->required();
  auto* explain = app.add_subcommand("explain", "the waterfall from speed of light to the calibrated step and the reported one");
  add_plan_args(explain, expl);
  explain->add_option("--profile", expl_profile,
                      "hardware profile (default for DeepSeek-V3 at speed of light on H800s: workloads/hardware/h800-calibrated.yaml; "
                      "--set hardware.profile wins)");
  explain->add_option("--png", expl_png, "also draw the waterfall as a PNG");
  bool expl_no_routing = false;
  explain->add_flag("--no-routing-sim", expl_no_routing, "skip the routing-imbalance replay (minutes); its bar is 0");
  PlanArgs rep;
  stepsim::ReportArgs rep_args;
  bool rep_no_waterfall = false;
  auto* report = app.add_subcommand("report", "one self-contained HTML page of the simulated step (plan, roofline, "
                                              "per-GPU split, timeline, memory, layers, waterfall)");
  report->add_option("config", rep.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  report->add_option("--set", rep.sets, "override a config value: key=value (repeatable; value parsed as YAML)")
      ->allow_extra_args(false);
  report->add_option("-o,--output", rep_args.out_path, "the HTML file to write")->required();
  report->add_flag("--no-waterfall", rep_no_waterfall, "skip explain's waterfall and its replays");
  report->add_flag("--routing-sim", rep_args.routing_sim,
                   "replay the waterfall's routing-imbalance bar too (minutes on large plans)");
  report->add_flag("-q,--quiet", rep.quiet, "no progress on stderr");
  stepsim::SweepArgs sw;
  auto* sweep = app.add_subcommand("sweep", "simulate every point of a --grid in parallel; CSV and PNG in -o DIR");
  sweep->add_option("config", sw.config, "YAML config (default: workloads/deepseek-v3.yaml)");
  sweep->add_option("--set", sw.sets, "override a config value for every point: key=value")->allow_extra_args(false);
  sweep->add_option("--grid", sw.grids, "key=v1,v2,...: values to sweep (repeatable: cartesian product)")
      ->allow_extra_args(false);
  sweep->add_option("-o,--output", sw.out_dir, "sweep directory: sweep.csv, sweep.png, points/");
  sweep->add_option("-j,--jobs", sw.jobs, "points run at once (default: all cores)");
  sweep->add_option("--emit-jobs", sw.emit_jobs, "write one shell command per point to this file instead of running");
  sweep->add_option("--collect", sw.collect_dir, "merge the points of an --emit-jobs sweep directory");
  sweep->add_option("--plot-x", sw.plot_x, "grid key on the x axis (default: the first --grid)");
  sweep->add_option("--plot-y", sw.plot_y, "report fields to plot (default: step_time_s)");
  sweep->add_option("--png", sw.png, "write the chart here instead of DIR/sweep.png");
  sweep->add_option("--title", sw.title, "chart title (default: the config and --set values)");
  sweep->add_flag("-q,--quiet", sw.quiet, "no progress on stderr");

  stepsim::SearchArgs se;
  auto* search = app.add_subcommand("search", "the fastest plan for a model, cluster and batch: validate, prune, "
                                              "estimate and replay the plans they admit; results in -o DIR");
  search->add_option("config", se.config, "YAML config: the model, cluster and batch (default: workloads/deepseek-v3.yaml)");
  search->add_option("--set", se.sets, "override a config value for every plan: key=value")->allow_extra_args(false);
  search->add_option("--gpus", se.gpus, "the number of GPUs (whole nodes of cluster.gpus_per_node)");
  search->add_option("--tokens-per-step", se.tokens_per_step, "the batch in tokens (train.global_batch_tokens)");
  search->add_option("--global-batch", se.global_batch, "the batch in sequences (train.global_batch)");
  search->add_option("--only", se.only, "key=v1,v2,...: the only values a searched key takes (repeatable)")
      ->allow_extra_args(false);
  search->add_option("--fix", se.fix, "key=value: one value for a key in every plan (repeatable)")->allow_extra_args(false);
  search->add_option("--top", se.top, "rows of the printed table (default 10)");
  search->add_option("-o,--output", se.out_dir, "search directory: search.csv, pruned.csv, summary.txt, pareto.png, best.yaml, points/");
  search->add_option("-j,--jobs", se.jobs, "replays run at once (default: all cores)");
  search->add_option("--margin", se.margin_pct, "percent: replays stop when the next estimate less this is no faster "
                                                "than the best replayed step (default 10)");
  search->add_option("--max-replays", se.max_replays, "the most candidates replayed (default 32)");
  search->add_option("--max-plans", se.max_plans, "the most plans validated: a larger space is cut to its first, "
                                                  "in enumeration order, and the summary says so (default 50000)");
  search->add_option("--emit-jobs", se.emit_jobs, "validate, prune and rank, then write one shell command per replay to this "
                                                  "file (the first --max-replays ranked plans and the config's own; e.g. for "
                                                  "a Slurm array) instead of running them; the same search again reads them back");
  search->add_flag("-q,--quiet", se.quiet, "no progress on stderr");

  stepsim::ImportArgs imp;
  auto* import = app.add_subcommand("import", "read a Megatron-LM launch script or a torchtitan job TOML into a stepsim plan");
  import->add_option("source", imp.tool, "megatron (a launch script or argument list) or torchtitan (a job TOML)")->required();
  import->add_option("file", imp.file, "the file to read (nothing in it is run)")->required();
  import->add_option("-o,--output", imp.out, "plan YAML to write (default: stdout)");
  import->add_option("--gpus", imp.gpus, "the number of GPUs (required for torchtitan; overrides Megatron's torchrun)");
  import->add_option("--gpus-per-node", imp.gpus_per_node, "GPUs per node (default: torchrun's --nproc-per-node, else 8)");
  import->add_option("--hardware", imp.hardware, "GPU preset written into the plan (default h100-sxm)");
  import->add_flag("-q,--quiet", imp.quiet, "no notes on stderr");

  stepsim::ExportArgs exp;
  auto* exporter = app.add_subcommand("export", "write the Megatron-LM launch script or torchtitan job TOML that runs a plan");
  exporter->add_option("target", exp.tool, "megatron (a launch script) or torchtitan (a job TOML)")->required();
  exporter->add_option("plan", exp.plan, "the plan's YAML config")->required();
  exporter->add_option("--set", exp.sets, "override a config value: key=value (repeatable; value parsed as YAML)")
      ->allow_extra_args(false);
  exporter->add_option("-o,--output", exp.out, "file to write (default: stdout)");

  // A first word that is no command would otherwise read as "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      print_error("error", std::string(argv[1]) + ": unknown command; use one of " + names + " (see stepsim --help)");
      return stepsim::kBadInputExit;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error("error", std::string(e.what()) + "; see stepsim --help");
    return stepsim::kBadInputExit;
  }
  // An empty value (often an unset shell variable, --emit-jobs "$JOBS") would read as "not given"
  // and silently change what runs (a whole sweep instead of its job list): refuse it.
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* opt : sub->get_options())
      if (opt->get_type_size_max() > 0)
        for (const std::string& value : opt->results())
          if (value.empty()) {
            print_error("error", opt->get_name() + ": the value is empty (an unset shell variable?); give a value "
                                                   "or leave the option out");
            return stepsim::kBadInputExit;
          }

  const auto run_command = [&]() -> int {
    if (*roofline) return stepsim::run_roofline(load(roof), roof.json);
    if (*compare || *calibrate) {
      PlanArgs& a = *compare ? cmp : cal;
      if (a.config.empty()) a.config = std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-profile-capture.yaml";
      if (*compare) return stepsim::run_compare(cmp_trace, load(cmp), cmp.json, cmp.quiet);
      return stepsim::run_calibrate(cal_trace, load(cal), cal_out, cal.json, cal.quiet);
    }
    if (*explain) {
      // The shipped calibrated profile is DeepSeek's trace on the H800 under the speed-of-light model:
      // the default only for DeepSeek-V3 at speed of light on H800s (the seed's plan). Any other plan
      // explains its own model (predicted: class by class), with --profile if one is given.
      std::string profile = expl_profile;
      if (profile.empty()) {
        const stepsim::Plan bare = stepsim::load_plan(expl.config.empty() ? stepsim::default_config_path() : expl.config,
                                                      expl.sets);
        if (bare.sim.compute == stepsim::ComputeModel::SpeedOfLight && stepsim::is_deepseek_v3(bare.model) &&
            bare.hardware.name == "H800")
          profile = std::string(STEPSIM_SOURCE_DIR) + "/workloads/hardware/h800-calibrated.yaml";
      }
      if (!profile.empty()) expl.sets.insert(expl.sets.begin(), "hardware.profile=" + profile);
      return stepsim::run_explain(load(expl), expl.json, expl.quiet, expl_png, !expl_no_routing);
    }
    if (*simulate) return stepsim::run_simulate(load(sim), sim.json, sim.quiet, sim.trace, sim.trace_ranks,
                                                      sim.trace_window, sim.strict);
    if (*sweep) return stepsim::run_sweep(sw);
    if (*search) return stepsim::run_search(se);
    if (*report) {
      // The exact command, run from the same folder, writes the same page.
      std::string command = stepsim::io::cd_prefix(std::filesystem::current_path().string());
      for (int i = 0; i < argc; ++i) {
        if (i > 0) command += ' ';
        command += stepsim::io::shell_quote(argv[i]);
      }
      rep_args.command = command;
      rep_args.version = std::string("stepsim ") + STEPSIM_VERSION;
      rep_args.quiet = rep.quiet;
      rep_args.waterfall = !rep_no_waterfall;
      return stepsim::run_report(load(rep), rep_args);
    }
    if (*import) return stepsim::run_import(imp);
    if (*exporter) return stepsim::run_export(exp);
    if (*platform) {
      const stepsim::Plan plan = load(plat);
      const stepsim::PlatformSpec spec = stepsim::platform_spec(plan);
      if (!plat_png.empty()) stepsim::io::check_output_path(plat_png, "--png", stepsim::io::kDashBinary);
      const auto xml = stepsim::platform_xml(spec);
      if (!out_path.empty()) stepsim::io::write_output_file(out_path, "-o", stepsim::io::kDashIsStdout, xml);
      else if (plat_png.empty()) std::cout << xml;
      if (!plat_png.empty())
        stepsim::plot::write_topology_png(spec, std::string(stepsim::to_string(plan.cluster.topology)) + " cluster of " +
                                                    std::to_string(plan.gpus()) + " " + plan.hardware.name + " GPUs (" +
                                                    std::filesystem::path(plan.source).filename().string() + ")",
                                          plat_png);
      return 0;
    }
    return 0;
  };
  try {
    const stepsim::io::CommandFiles files;  // no output may replace an input or another output
    const int rc = run_command();
    stepsim::io::finish_stdout();  // a report lost to a full disk is an error, not exit 0
    return rc;
  } catch (const stepsim::ConfigError& e) {
    print_error("error", e.what());
    return stepsim::kBadInputExit;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "stepsim: error: out of memory; the plan is too large for this machine (fewer GPUs, layers "
                         "or microbatches, or sim.mode=auto)\n");
    return 1;
  } catch (const std::exception& e) {
    print_error("internal error", e.what());
    return 1;
  }
}
