// The work behind each subcommand, apart from argument parsing so tests can call it.
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

int run_roofline(const Plan& plan, bool json);
// `trace_path` empty: no trace.
int run_simulate(const Plan& plan, bool json, bool quiet, const std::string& trace_path = "",
                 const std::string& trace_ranks = "", const std::string& trace_window = "",
                 bool strict = false);  // strict: exit kPlanDoesNotFitExit (3) when memory does not fit

// `stepsim sweep`: see simulator/cli/sweep_command.cpp.
struct SweepArgs {
  std::string config;              // empty: the default config
  std::vector<std::string> sets;   // shared by every point
  std::vector<std::string> grids;  // key=v1,v2,...
  std::string out_dir, emit_jobs, collect_dir, plot_x, png, title;
  std::vector<std::string> plot_y;
  int jobs = 0;  // 0: one per hardware thread
  bool quiet = false;
};
int run_sweep(const SweepArgs& args);

// `stepsim search`: see simulator/cli/search_command.cpp.
struct SearchArgs {
  std::string config;               // empty: the default config
  std::vector<std::string> sets;    // applied to every plan
  std::string gpus, tokens_per_step, global_batch;  // as typed (empty: the config's)
  std::vector<std::string> only, fix;
  std::string out_dir;
  int top = 10;
  int jobs = 0;            // 0: one per hardware thread
  double margin_pct = 10;  // the stopping rule's margin, percent
  int max_replays = 32;
  long long max_plans = 50000;  // the most plans validated
  bool quiet = false;
  std::string emit_jobs;  // not empty: write the replays' command lines there ("-": stdout) instead of running them
};
int run_search(const SearchArgs& args);

// `stepsim report`: one self-contained HTML page of the simulated step (simulator/cli/report_command.cpp).
struct ReportArgs {
  std::string out_path;      // -o: the HTML file
  bool quiet = false;
  bool waterfall = true;     // run explain's replays for the waterfall (model workloads)
  bool routing_sim = false;  // include its routing-imbalance replay (minutes on large plans)
  std::string command;       // the command line that reproduces the page
  std::string version;       // "stepsim 0.1.0"
};
int run_report(const Plan& plan, const ReportArgs& args);

// `stepsim import`: see simulator/cli/import_command.cpp.
struct ImportArgs {
  std::string tool, file, out, hardware;  // out empty: stdout; hardware empty: the importer's default
  // --gpus and --gpus-per-node as typed (empty: not given; then from the file, Megatron's torchrun,
  // else required / 8), checked by run_import so a 0 or an overflowing count is refused by name.
  std::string gpus, gpus_per_node;
  bool quiet = false;
};
int run_import(const ImportArgs& args);

// `stepsim export`: see simulator/cli/export_command.cpp.
struct ExportArgs {
  std::string tool, plan, out;    // out empty: stdout
  std::vector<std::string> sets;  // --set overrides of the plan
};
int run_export(const ExportArgs& args);

// Calibration against a real profiler trace (simulator/calibration/): compare a capture, derive a
// hardware profile (written to `out_path`), and the speed-of-light-to-reality waterfall.
int run_compare(const std::string& trace_path, const Plan& plan, bool json, bool quiet);
int run_calibrate(const std::string& trace_path, const Plan& plan, const std::string& out_path, bool json, bool quiet);
int run_explain(const Plan& plan, bool json, bool quiet, const std::string& png_path, bool routing_sim = true);

}  // namespace stepsim
