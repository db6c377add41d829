// `stepsim sweep`: runs `simulate --json` over the cartesian product of --grid values in parallel
// child processes of this same binary (or writes their command lines for a cluster), then merges
// the reports into DIR/sweep.csv and DIR/sweep.png.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "simulator/cli/cli_paths.hpp"
#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/report/report_fields.hpp"
#include "simulator/sweep/collect.hpp"
#include "simulator/sweep/grid.hpp"
#include "simulator/sweep/manifest.hpp"
#include "simulator/sweep/process_pool.hpp"
#include "simulator/sweep/sweep_plot.hpp"

namespace stepsim {
namespace {

using namespace stepsim::sweep;

using cli::absolute_path;

void refuse_dash_dir(const std::string& dir, const std::string& option) {
  if (io::is_stdout(dir))
    throw ConfigError(option + " -: the sweep's output is a directory, so - cannot mean stdout here; name a "
                      "directory (./- for one named -)");
}

// What the sweep writes into DIR, claimed before anything is (io/command_files.hpp): none of it may
// replace an input (the config, a file --set names) or another output (--png, --emit-jobs). A
// sweep that runs (`points` > 0) writes its manifest and points; --collect reads them.
void claim_sweep_outputs(const std::string& dir, const Manifest& m, int points) {
  if (points > 0) io::claim_output(manifest_path(dir), "-o");
  io::claim_output(dir + "/sweep.csv", "-o");
  if (m.png.empty()) io::claim_output(dir + "/sweep.png", "--png");
  for (int i = 0; i < points; ++i) {
    io::claim_output(point_json_path(dir, i, points), "-o");
    io::claim_output(point_err_path(dir, i, points), "-o");
  }
}

void check_plot_x(const Manifest& m) {
  if (m.plot_x.empty()) return;
  for (const auto& a : m.axes)
    if (a.key == m.plot_x) return;
  throw ConfigError("--plot-x " + m.plot_x + ": not one of the --grid keys; plot against a key the sweep varies");
}

// --plot-y names fields of the simulate report (simulator/report/report_fields.hpp), so a
// misspelt or text field, or a mix of three units, is refused before any point runs.
void check_plot_y(const std::vector<std::string>& fields) {
  for (const auto& y : fields) {
    const ReportField* f = find_report_field(y);
    if (f == nullptr) {
      std::string near;
      for (const auto& n : closest_report_fields(y)) near += (near.empty() ? "" : ", ") + n;
      throw ConfigError("--plot-y " + y + ": not a field of the simulate report; did you mean " + near +
                        "? (the fields are the columns of sweep.csv; README, \"Simulation\")");
    }
    if (f->kind != ReportField::Kind::Number)
      throw ConfigError("--plot-y " + y + ": a " + (f->kind == ReportField::Kind::Flag ? "true/false" : "text") +
                        " field, not a number a chart can draw; plot a number such as step_time_s or exposed_comm_share");
  }
  check_plot_units(fields);
}

int report(const CollectSummary& s, bool quiet) {
  if (!quiet || s.failed)
    std::fprintf(stderr, "stepsim sweep: %d points, %d failed; wrote %s%s\n", s.points, s.failed, s.csv.c_str(),
                 s.plotted ? (" and " + s.png).c_str() : "");
  if (!quiet && s.out_of_memory > 0)
    std::fprintf(stderr, "stepsim sweep: %d point%s do%s not fit in GPU memory (memory.fits false; drawn hollow, "
                 "labelled OOM)\n", s.out_of_memory, s.out_of_memory > 1 ? "s" : "", s.out_of_memory > 1 ? "" : "es");
  if (!quiet && s.points - s.failed > 0)
    std::fprintf(stderr, "stepsim sweep: fastest plan that fits in memory: %s\n",
                 s.fastest.empty() ? "none (every point that ran is out of memory)" : s.fastest.c_str());
  return s.failed ? 1 : 0;
}

int collect_only(const SweepArgs& a) {
  refuse_dash_dir(a.collect_dir, "--collect");
  if (!a.config.empty() || !a.grids.empty() || !a.sets.empty() || !a.emit_jobs.empty())
    throw ConfigError("--collect " + a.collect_dir + ": takes only the sweep directory (and --plot-x/--plot-y); the grid is in its sweep.json");
  Manifest m = read_manifest(a.collect_dir);
  if (!a.plot_x.empty()) m.plot_x = a.plot_x;
  if (!a.plot_y.empty()) m.plot_y = a.plot_y;
  if (!a.png.empty()) io::check_output_path(a.png, "--png", io::kDashBinary);
  if (!a.png.empty()) m.png = absolute_path(a.png);
  if (!m.png.empty()) io::check_output_path(m.png, "--png", io::kDashBinary);
  if (!a.title.empty()) m.title = a.title;
  check_plot_x(m);
  check_plot_y(m.plot_y);
  claim_sweep_outputs(a.collect_dir, m, 0);
  return report(collect(a.collect_dir, m), a.quiet);
}

// Every point's plan is checked here; only when none is valid is that bad input (exit 2), because
// a grid may legitimately cross into impossible plans (those points record their error).
void check_some_point_loads(const Manifest& m, const std::vector<GridPoint>& grid) {
  std::string first_error;
  for (const auto& p : grid) {
    auto overrides = m.sets;
    for (const auto& o : p.overrides()) overrides.push_back(o);
    try {
      load_plan(m.config, overrides);
      return;
    } catch (const ConfigError& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  throw ConfigError(first_error + " (every point of the sweep fails this way)");
}

// Every line is built (and checked) before the manifest or the job list is written. Each returns to
// this folder first: a --set or --grid value may name a file by a relative path.
int emit_jobs(const SweepArgs& a, const Manifest& m, const std::vector<GridPoint>& grid) {
  const std::string folder = job_folder();
  const std::string dir = absolute_path(a.out_dir);
  std::string lines;
  for (const auto& p : grid) lines += point_shell_line(m, p, folder, dir, int(grid.size())) + "\n";
  io::write_output_file(a.emit_jobs, "--emit-jobs", io::kDashIsStdout, lines);  // first: a full disk leaves no half sweep
  write_manifest(a.out_dir, m);
  if (!a.quiet)
    std::fprintf(stderr,
                 "stepsim sweep: wrote %zu job lines to %s; run each (e.g. a Slurm array task runs line "
                 "$SLURM_ARRAY_TASK_ID+1), then: stepsim sweep --collect %s\n",
                 grid.size(), io::is_stdout(a.emit_jobs) ? "stdout" : a.emit_jobs.c_str(), a.out_dir.c_str());
  return 0;
}

int run_local(const SweepArgs& a, const Manifest& m, const std::vector<GridPoint>& grid) {
  const int n = int(grid.size());
  std::vector<Job> jobs;
  for (const auto& p : grid)
    jobs.push_back({point_argv(m, p), point_json_path(a.out_dir, p.index, n), point_err_path(a.out_dir, p.index, n)});
  // More points at once than cores only makes each slower and multiplies memory.
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  if (a.jobs > cores && !a.quiet)
    std::fprintf(stderr, "stepsim sweep: -j %d capped at the %d cores\n", a.jobs, cores);
  const int parallel = a.jobs > 0 ? std::min(a.jobs, cores) : cores;
  if (!a.quiet)
    std::fprintf(stderr, "stepsim sweep: %d points, %d at a time, into %s\n", n, std::min(parallel, n), a.out_dir.c_str());
  const auto start = std::chrono::steady_clock::now();
  int done = 0, failed = 0;
  const auto statuses = run_jobs(jobs, parallel, [&](size_t, const JobStatus& s) {
    ++done;
    failed += s.ok() ? 0 : 1;
    if (a.quiet) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / done * (n - done);
    std::fprintf(stderr, "stepsim sweep: %d/%d points done%s, %.0f s elapsed, ETA %.0f s\n", done, n,
                 failed ? (" (" + std::to_string(failed) + " failed)").c_str() : "", elapsed, eta);
  });
  for (const Job& j : jobs) io::output_written(j.stdout_path), io::output_written(j.stderr_path);  // collect reads them
  if (const int sig = stop_signal()) {
    std::fprintf(stderr, "stepsim sweep: stopped by %s after %d of %d points; their reports are in %s/points "
                 "(rerun the sweep to finish it)\n", sig == SIGINT ? "SIGINT" : "SIGTERM", done, n, a.out_dir.c_str());
    return 128 + sig;
  }
  return report(collect(a.out_dir, m, statuses), a.quiet);
}

}  // namespace

int run_sweep(const SweepArgs& a) {
  if (!a.collect_dir.empty()) return collect_only(a);
  if (a.out_dir.empty()) throw ConfigError("-o: missing; give the sweep's output directory, for example -o sweeps/fsdp");
  refuse_dash_dir(a.out_dir, "-o");
  if (a.jobs < 0) throw ConfigError("-j " + std::to_string(a.jobs) + ": must be a positive number of parallel points (or 0 for all cores)");
  Manifest m;
  for (const auto& g : a.grids) m.axes.push_back(parse_grid_axis(g));
  check_grid(m.axes);
  for (const auto& s : a.sets) check_override(s);
  m.config = absolute_path(a.config.empty() ? default_config_path() : a.config);
  m.sets = a.sets;
  m.plot_x = a.plot_x;
  m.plot_y = a.plot_y;
  m.png = a.png.empty() ? "" : absolute_path(a.png);
  m.title = a.title;
  check_plot_x(m);
  check_plot_y(m.plot_y);
  std::error_code ec;
  m.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw ConfigError("/proc/self/exe: cannot find the stepsim binary to run each point (" + ec.message() + ")");
  const auto grid = cartesian_product(m.axes);
  check_some_point_loads(m, grid);
  // Outputs written after the points ran (or after the manifest) are checked before anything is
  // written, once the inputs have been read.
  if (!a.png.empty()) io::check_output_path(a.png, "--png", io::kDashBinary);
  if (!a.emit_jobs.empty()) io::check_output_path(a.emit_jobs, "--emit-jobs", io::kDashIsStdout);
  claim_sweep_dir(a.out_dir, m);
  claim_sweep_outputs(a.out_dir, m, int(grid.size()));
  if (!a.emit_jobs.empty()) return emit_jobs(a, m, grid);
  write_manifest(a.out_dir, m);
  return run_local(a, m, grid);
}

}  // namespace stepsim
