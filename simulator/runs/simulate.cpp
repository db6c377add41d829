#include "simulator/runs/simulate.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"

#include "simulator/runs/baseline_step.hpp"
#include "simulator/engine/engine.hpp"
#include "workloads/model/model_workload.hpp"
#include "workloads/synthetic/synthetic_workload.hpp"

namespace stepsim {

namespace {

// A workload and the platform its GPU ids refer to.
struct Replay {
  std::unique_ptr<ops::Workload> workload;
  PlatformSpec platform;
};

Replay make_replay(const Plan& plan) {
  switch (plan.workload.kind) {
    case WorkloadKind::Synthetic: return {make_synthetic_workload(plan), synthetic_platform(plan)};
    case WorkloadKind::Model: {
      auto w = std::make_unique<ModelWorkload>(plan);
      PlatformSpec spec = w->platform();
      return {std::move(w), std::move(spec)};
    }
  }
  throw std::logic_error("unknown workload kind");
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace

engine::ReplayCount check_replay_size(const Plan& p, double limit) {
  const Replay replay = make_replay(p);
  const engine::ReplayCount c = engine::count_replay(replay.platform, *replay.workload, limit);
  if (!c.stopped) return c;
  // Every key of the plan bears on the count: a --set of one of these is the likelier culprit.
  const bool every_gpu = p.sim.mode == SimMode::Full || p.scenario.perturbed();
  const std::string key = every_gpu ? "sim.mode" : "parallel.microbatches";
  const std::string origin =
      origin_of(p, key, {"sim.mode", "parallel.microbatches", "parallel.micro_batch_size", "model.num_hidden_layers",
                         "parallel.pp", "parallel.tp", "parallel.cp", "parallel.ep", "parallel.zero", "schedule",
                         "cluster.nodes", "cluster.gpus_per_node", "parallel.tp_comm_overlap", "scenario.routing",
                         "scenario.stragglers", "scenario.jitter_sigma"});
  // Past the limit the count stopped: what the GPUs counted so far ran, scaled to all of them.
  const double about = c.activities * double(c.gpus) / double(std::max<int64_t>(1, c.gpus_counted));
  throw ConfigError(origin + ": " + key + ": the replay would run " +
                    (c.gpus_counted < c.gpus ? "about " + sci(about) : "over " + sci(c.activities)) +
                    " SimGrid activities on " + std::to_string(c.gpus) + " simulated GPUs, over the " +
                    sci(limit) +
                    " a replay may take (a full 16,384-GPU DeepSeek-V3 step needs 1.2e8; more runs for hours); use "
                    "fewer microbatches, layers or GPUs" +
                    (p.sim.mode == SimMode::Full ? ", or sim.mode=auto" : ""));
}

SimResult simulate(const Plan& plan, const SimOptions& options) {
  // A perturbed step is compared with the same plan unperturbed (run first, in a child process).
  const double baseline_s = plan.scenario.perturbed() ? simulate_baseline_step(plan) : -1;
  const Replay replay = make_replay(plan);
  SimOptions opt = options;
  opt.jitter_sigma = plan.scenario.jitter_sigma;
  opt.seed = plan.scenario.seed;
  SimResult r = engine::run(replay.platform, *replay.workload, opt);
  r.stragglers.baseline_step_s = baseline_s;
  r.schedule = to_string(plan.parallel.schedule);
  return r;
}

}  // namespace stepsim
