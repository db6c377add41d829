// `stepsim search`: the fastest plan for a model, cluster and batch. Enumerates the plans the model
// and cluster admit (narrowed by --only and --fix), validates them, prunes those that do not fit
// in memory, ranks the rest by a fast estimate and replays the best (simulator/search/), then
// writes the ranked table, the pruning, a Pareto chart and the winner as a config into -o DIR.
// With --emit-jobs FILE it stops before the replays and writes them as shell lines for a cluster
// (the sweep's job lines, simulator/sweep/manifest.hpp); the same search run again reads them back.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "simulator/cli/cli_paths.hpp"
#include "simulator/cli/commands.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/io/shell_quote.hpp"
#include "simulator/search/search.hpp"
#include "simulator/search/search_output.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim {
namespace {

using cli::absolute_path;

// A positive whole number given to `option`, as typed; ConfigError naming it otherwise.
long long positive(const std::string& text, const std::string& option, long long max) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || !end || *end != '\0' || errno != 0 || v <= 0 || v > max)
    throw ConfigError(option + " " + text + ": expected a whole number between 1 and " + std::to_string(max));
  return v;
}

// --emit-jobs FILE: refused before any work runs when the search directory would clobber it (its
// outputs and points are claimed as -o's, which refuses those; its manifest is read before it is
// written, so it is compared here).
void check_job_list(const std::string& path, const std::string& dir) {
  if (!io::is_stdout(path)) {
    std::error_code ec;
    const auto canon = [&](const std::string& p) {
      return std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec).lexically_normal();
    };
    if (canon(path) == canon(dir + "/search.json"))
      throw ConfigError("--emit-jobs " + path + ": is the search's manifest, which the search writes into -o " + dir +
                        "; write the job list elsewhere, for example " + dir + "/jobs.txt");
  }
  io::check_output_path(path, "--emit-jobs", io::kDashIsStdout);
}

}  // namespace

int run_search(const SearchArgs& a) {
  if (a.out_dir.empty()) throw ConfigError("-o: missing; give the search's output directory, for example -o search-8b");
  if (io::is_stdout(a.out_dir))
    throw ConfigError("-o -: the search's output is a directory, so - cannot mean stdout here; name a directory");
  if (a.jobs < 0) throw ConfigError("-j " + std::to_string(a.jobs) + ": must be a positive number of parallel replays (or 0 for all cores)");
  if (a.top < 1) throw ConfigError("--top " + std::to_string(a.top) + ": must be at least 1 (rows of the printed table)");
  if (!(a.margin_pct >= 0 && a.margin_pct < 100))
    throw ConfigError("--margin " + std::to_string(a.margin_pct) + ": a percentage from 0 up to (not including) 100");
  if (a.max_replays < 1 || a.max_replays > 10000)
    throw ConfigError("--max-replays " + std::to_string(a.max_replays) + ": between 1 and 10000 replays");
  if (a.max_plans < 1 || a.max_plans > 10'000'000)
    throw ConfigError("--max-plans " + std::to_string(a.max_plans) + ": between 1 and 10000000 plans");
  search::SearchOptions o;
  o.max_plans = a.max_plans;
  o.config = absolute_path(a.config.empty() ? default_config_path() : a.config);
  o.sets = a.sets;
  for (const auto& s : a.sets) check_override(s);
  if (!a.tokens_per_step.empty() && !a.global_batch.empty())
    throw ConfigError("--tokens-per-step and --global-batch give the batch twice; keep one");
  if (!a.tokens_per_step.empty())
    o.sets.push_back("train.global_batch_tokens=" + std::to_string(positive(a.tokens_per_step, "--tokens-per-step", 1LL << 40)));
  if (!a.global_batch.empty())
    o.sets.push_back("train.global_batch=" + std::to_string(positive(a.global_batch, "--global-batch", 1 << 24)));
  if (!a.gpus.empty()) {
    const long long gpus = positive(a.gpus, "--gpus", 1 << 24);
    // The node size is the config's (or a --set's): the GPUs fill whole nodes, or one smaller node.
    const Plan probe = [&] {
      try {
        return load_plan(o.config, o.sets);
      } catch (const ConfigError&) {
        std::vector<std::string> neutral = o.sets;
        for (const char* s : {"schedule=1f1b", "parallel.pp=1", "parallel.tp=1", "parallel.cp=1", "parallel.zero=1",
                              "parallel.microbatches=1", "parallel.virtual_stages=1"})
          neutral.push_back(s);
        try {
          return load_plan(o.config, neutral);
        } catch (const ConfigError&) {
          neutral.push_back("parallel.ep=1");
          neutral.push_back("parallel.split_lone_chunks=false");
          return load_plan(o.config, neutral);
        }
      }
    }();
    const long long g = probe.cluster.gpus_per_node;
    if (gpus % g == 0) {
      o.sets.push_back("cluster.nodes=" + std::to_string(gpus / g));
    } else if (gpus < g) {
      o.sets.push_back("cluster.gpus_per_node=" + std::to_string(gpus));
      o.sets.push_back("cluster.nodes=1");
    } else {
      throw ConfigError("--gpus " + a.gpus + ": not a whole number of the config's " + std::to_string(g) +
                        "-GPU nodes (cluster.gpus_per_node); use a multiple of " + std::to_string(g));
    }
  }
  o.only = a.only;
  o.fix = a.fix;
  o.out_dir = a.out_dir;
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  o.jobs = a.jobs > 0 ? std::min(a.jobs, cores) : cores;
  o.margin = a.margin_pct / 100.0;
  o.max_replays = a.max_replays;
  o.quiet = a.quiet;
  std::error_code ec;
  o.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw ConfigError("/proc/self/exe: cannot find the stepsim binary to replay each plan (" + ec.message() + ")");
  // No output may replace an input (checked before any work runs); DIR is made once the plans
  // have been validated.
  for (const auto& [path, option] : search::output_files(o.out_dir)) io::claim_output(path, option);
  if (!a.emit_jobs.empty()) check_job_list(a.emit_jobs, o.out_dir);
  o.emit_jobs = a.emit_jobs;
  const search::SearchResult r = search::run_search(o);
  if (r.jobs_emitted >= 0) {
    const std::string where = io::is_stdout(a.emit_jobs) ? "stdout" : a.emit_jobs;
    const std::string file = io::is_stdout(a.emit_jobs) ? "JOBS" : io::shell_quote(a.emit_jobs);
    if (!a.quiet && r.jobs_emitted > 0)
      std::fprintf(stderr,
                   "stepsim search: wrote %d job lines to %s (the first %d ranked plans at most, --max-replays, then the "
                   "config's own plan when it fits: every replay the stopping rule could run); run each, e.g. as a Slurm "
                   "array (scripts/slurm-sweep.sh %s, or sbatch --array=1-%d with each task running "
                   "sed -n \"${SLURM_ARRAY_TASK_ID}p\" %s | bash), then run this search again without --emit-jobs: it "
                   "reads their reports back from %s/points and writes its outputs\n",
                   r.jobs_emitted, where.c_str(), a.max_replays, file.c_str(), r.jobs_emitted, file.c_str(), o.out_dir.c_str());
    if (r.jobs_emitted == 0)
      std::fprintf(stderr, "stepsim search: no plan fits in memory (by the static estimate), so there is nothing to "
                   "replay; %s holds no job line\n", where.c_str());
    return r.jobs_emitted > 0 ? 0 : 1;
  }
  if (r.stopped_by_signal) {
    std::fprintf(stderr, "stepsim search: stopped by %s; the finished replays are in %s/points (rerun the same command "
                 "to resume)\n", r.signal == 2 ? "SIGINT" : "SIGTERM", o.out_dir.c_str());
    return 128 + r.signal;
  }
  const std::string summary = search::write_search_outputs(o, r, a.top);
  std::fputs(summary.c_str(), stdout);
  return r.best >= 0 ? 0 : 1;
}

}  // namespace stepsim
