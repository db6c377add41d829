// Helpers for the memory tests: a plan from a shipped config plus overrides, and a simulation run
// in a forked child (SimGrid allows one Engine per process) that sends back each rank's memory.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/runs/child_run.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim::test {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct RankPeak {
  int64_t rank = 0;
  RankMemory memory;
};

struct MemoryRun {
  bool has_memory = false;
  std::vector<RankPeak> ranks;
  size_t samples = 0;

  const RankPeak& gpu(int64_t id) const {
    for (const RankPeak& r : ranks)
      if (r.rank == id) return r;
    throw std::runtime_error("GPU " + std::to_string(id) + " was not simulated");
  }
  double max_peak() const {
    double m = 0;
    for (const RankPeak& r : ranks) m = std::max(m, r.memory.peak_bytes);
    return m;
  }
};

inline Plan plan_with(std::vector<std::string> sets, const std::string& config = default_config_path()) {
  return load_plan(config, sets);
}

inline MemoryRun simulate_memory(const Plan& plan, bool spans = false) {
  const std::string msg = run_in_child([&] {
    SimOptions opt;
    opt.quiet = true;
    opt.record_spans = spans;
    const SimResult r = simulate(plan, opt);
    std::string out;
    const char has = r.has_memory ? 1 : 0;
    const size_t n = r.ranks.size(), samples = r.memory_samples.size();
    out.append(&has, 1);
    out.append(reinterpret_cast<const char*>(&samples), sizeof samples);
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    for (const RankResult& rr : r.ranks) {
      const RankPeak p{rr.rank, rr.memory};
      out.append(reinterpret_cast<const char*>(&p), sizeof p);
    }
    return out;
  });
  MemoryRun run;
  size_t at = 0, n = 0;
  if (msg.size() < 1 + sizeof run.samples + sizeof n) throw std::runtime_error("short result from the simulation child");
  run.has_memory = msg[at++] != 0;
  std::memcpy(&run.samples, msg.data() + at, sizeof run.samples);
  at += sizeof run.samples;
  std::memcpy(&n, msg.data() + at, sizeof n);
  at += sizeof n;
  run.ranks.resize(n);
  if (msg.size() != at + n * sizeof(RankPeak)) throw std::runtime_error("short result from the simulation child");
  std::memcpy(run.ranks.data(), msg.data() + at, n * sizeof(RankPeak));
  return run;
}

}  // namespace stepsim::test
