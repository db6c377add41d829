#include "simulator/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <unistd.h>
#include <xbt/log.h>

#include "platforms/degraded_hardware.hpp"
#include "simulator/engine/engine_state.hpp"
#include "simulator/engine/progress.hpp"
#include "simulator/engine/replay_count.hpp"
#include "simulator/engine/span_recording.hpp"
#include "simulator/engine/gpu_actor.hpp"

namespace stepsim::engine {

using namespace stepsim::ops;

namespace sg4 = simgrid::s4u;

namespace {

// Engine::on_time_advance is a process-wide signal that outlives an Engine: connect it once and
// point it at the run in progress.
EngineState* g_running = nullptr;
Progress* g_progress = nullptr;

// For tests that interrupt a replay (Ctrl-C, SIGTERM) while it runs, at a point the program
// itself reaches instead of after a guessed delay: with STEPSIM_TEST_PAUSE_IN_REPLAY set, the
// replay's first time advance says so on stderr and waits there for a signal.
bool g_pause_in_replay = false;

void pause_for_a_signal() {
  g_pause_in_replay = false;
  std::fputs("stepsim: replay started; paused for a signal (STEPSIM_TEST_PAUSE_IN_REPLAY)\n", stderr);
  std::fflush(stderr);
  for (;;) ::pause();  // a handler that returns (a handled signal) leaves the pause: wait again
}

// Thrown out of Engine::run when no actor can move: SimGrid 3.32 aborts the process when it kills
// an actor blocked in Activity::wait_any, so the run stops here and check_finished says where.
struct Deadlocked {};

void connect_signals_once() {
  static bool connected = false;
  if (connected) return;
  connected = true;
  sg4::Engine::on_time_advance_cb([](double) {
    if (g_running != nullptr) g_running->clock = sg4::Engine::get_clock();
    if (g_running != nullptr && g_pause_in_replay) pause_for_a_signal();
    if (g_running != nullptr && g_progress != nullptr) g_progress->tick(g_running->clock, g_running->ops_done);
  });
  sg4::Engine::on_deadlock_cb([] {
    if (g_running != nullptr) throw Deadlocked{};
  });
}

// SimGrid reads its options from argv (a fake one): raw contexts (the fastest), logs quiet.
std::unique_ptr<sg4::Engine> make_simgrid_engine() {
  xbt_log_control_set("root.thres:critical");
  static char arg0[] = "stepsim";
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer cannot follow raw stack switches (Debian's SimGrid lacks its fiber
  // annotations): the sanitized build (scripts/test.sh --sanitize) runs actors as threads.
  static char arg1[] = "--cfg=contexts/factory:thread";
#else
  static char arg1[] = "--cfg=contexts/factory:raw";
#endif
  static char arg2[] = "--log=root.thres:critical";
  // Actor stacks of 256 KiB instead of 8 MiB: with thousands of actors the smaller stacks were
  // 1.5-2x faster (fewer cache and TLB misses); actors keep their data on the heap.
  static char arg3[] = "--cfg=contexts/stack-size:256";
  static char* argv[] = {arg0, arg1, arg2, arg3, nullptr};
  int argc = 4;
  // SimGrid answers SIGINT with its own handler, which ends the process with exit(1): Ctrl-C would
  // skip the removal of unfinished output files (io::OutputFile). Keep the handler stepsim had.
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  ::sigaction(SIGINT, &before, nullptr);
  return engine;
}

template <class F>
void start_actor(EngineState& e, const std::string& name, sg4::Host* host, F body) {
  sg4::Actor::create(name, host, [&e, body]() {
    try {
      body();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid unwinding a killed actor
    } catch (const std::exception& ex) {
      e.fail(ex.what());
    }
  });
}

SimResult collect(EngineState& e) {
  SimResult r;
  r.workload = e.workload.name();
  r.mode = e.workload.mode();
  r.fidelity = e.workload.fidelity();
  for (const GpuState& g : e.gpus) r.step_time_s = std::max(r.step_time_s, g.last_end - e.t_start);
  double most_loaded = -1;
  for (GpuState& g : e.gpus) {
    if (!g.simulated) continue;
    RankResult rr;
    rr.rank = g.id;
    rr.step_time_s = r.step_time_s;
    rr.compute_s = g.compute_s;
    // After its last compute op a GPU still waits for its own trailing collectives (e.g. the
    // gradient reduce-scatter): exposed communication; idling for other GPUs stays bubble.
    rr.exposed_comm_s = g.exposed_s + covered_within(g.comm_after_compute, g.compute_end, e.t_start + r.step_time_s);
    rr.bubble_s = bubble_from_rest(r.step_time_s, rr.compute_s, rr.exposed_comm_s);
    const double tail = rr.exposed_comm_s - g.exposed_s;
    for (size_t c = 0; c < kCommClasses; ++c) {
      rr.comm_s[c] = g.comm_busy[c].total();
      rr.exposed_s[c] = comm_class_info(c).reports_tail ? g.exposed_by_class[c] + tail : g.exposed_by_class[c];
    }
    rr.exposed_unpaired_s = g.exposed_unpaired;
    rr.memory = g.memory.peak;
    if (rr.compute_s + rr.exposed_comm_s > most_loaded) {
      most_loaded = rr.compute_s + rr.exposed_comm_s;
      r.critical_rank = rr.rank;
      r.comm_s = rr.comm_s;
    }
    r.ranks.push_back(rr);
  }
  r.has_memory = e.memory != nullptr;
  r.activities = e.activities;
  r.ops = e.ops_done;
  return r;
}

}  // namespace

SimResult run(const PlatformSpec& spec, const Workload& workload, const SimOptions& options) {
  // SimGrid 3.32 aborts the process on a second Engine: say so instead.
  static bool engine_used = false;
  if (engine_used) throw std::logic_error("SimGrid allows one simulation per process; run each in its own process");
  engine_used = true;
  const auto wall_start = std::chrono::steady_clock::now();
  const int streams = workload.num_streams();
  if (streams < 1 || streams > 255) throw std::invalid_argument("a GPU needs 1 to 255 streams");

  std::unique_ptr<sg4::Engine> sim = make_simgrid_engine();
  configure_exact_network(*sim);
  const std::vector<sg4::Host*> hosts = build_platform(*sim, spec);

  EngineState e(workload, options);
  e.fp8_flops = spec.gpu_flops;
  e.bf16_flops = workload.bf16_flops() > 0 ? workload.bf16_flops() : spec.gpu_flops;
  e.sm_tax = spec.comm_speed_factor < 1;
  e.sm_taxed_classes = spec.taxed_comm_classes;
  e.perturb.init(spec, options.jitter_sigma, options.seed);
  e.t_start = sg4::Engine::get_clock();
  e.clock = e.t_start;
  e.gpus.resize(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    GpuState& g = e.gpus[i];
    g.id = uint32_t(i);
    g.host = hosts[i];
    g.queues.resize(size_t(streams));
    g.streams.resize(size_t(streams));
    g.simulated = workload.simulated(int64_t(i));
    g.fixed_speed = gpu_speed_factor(spec, int64_t(i)).empty();
    g.speed = g.host->get_speed();
    g.record = options.record_spans && g.simulated &&
               (options.span_ranks.empty() || std::find(options.span_ranks.begin(), options.span_ranks.end(),
                                                        int32_t(i)) != options.span_ranks.end());
    if (g.simulated) g.program = workload.program(int64_t(i));
  }
  e.memory = workload.memory_model();
  if (e.memory != nullptr)
    for (GpuState& g : e.gpus)
      if (g.simulated) {
        start_memory(g.memory, e.memory->static_memory(g.id));
        if (g.record) e.memory_samples.push_back({int32_t(g.id), 0.0, g.memory.fixed.total()});
      }
  e.lazy_compute = workload.local_deps_only() && !e.perturb.any() && !options.record_spans;
  for (GpuState& g : e.gpus)
    if (g.simulated) start_actor(e, "gpu" + std::to_string(g.id), g.host, [&e, &g] { run_gpu(e, g); });

  const bool reports = !options.quiet || options.progress;
  const ReplayCount counted = options.counted ? *options.counted : !reports ? ReplayCount{} : count_replay(spec, workload);
  Progress progress(counted.ops, counted.activities, e.t_start, !options.quiet, options.progress);
  if (!options.quiet) {
    uint64_t simulated = 0;
    for (const GpuState& g : e.gpus) simulated += g.simulated ? 1 : 0;
    progress.announce(workload.mode(), simulated);
  }
  connect_signals_once();
  g_running = &e;
  g_progress = reports ? &progress : nullptr;
  g_pause_in_replay = std::getenv("STEPSIM_TEST_PAUSE_IN_REPLAY") != nullptr;
  try {
    sim->run();
  } catch (const Deadlocked&) {
    // The actors are still blocked inside SimGrid: leave the engine to the process's exit.
    (void)sim.release();
  } catch (...) {
    g_running = nullptr;
    g_progress = nullptr;
    throw;
  }
  g_running = nullptr;
  g_progress = nullptr;

  if (!e.error.empty()) throw std::runtime_error("simulation failed: " + e.error);
  if (std::string stuck = e.check_finished(); !stuck.empty()) throw std::runtime_error(stuck);
  progress.finish(e.clock, e.ops_done);

  SimResult r = collect(e);
  r.has_spans = options.record_spans;
  for (GpuState& g : e.gpus)
    if (g.record) record_tail(e, g, e.t_start + r.step_time_s);
  r.spans = std::move(e.spans);
  r.span_edges = std::move(e.span_edges);
  r.idle_spans = std::move(e.idle_spans);
  r.memory_samples = std::move(e.memory_samples);
  std::vector<bool> simulated;
  for (const GpuState& g : e.gpus) simulated.push_back(g.simulated);
  r.stragglers = e.perturb.report(simulated);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace stepsim::engine
