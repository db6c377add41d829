// Helpers for the memory tests: a plan from a shipped config plus overrides, and a simulation run
// in a forked child (SimGrid allows one Engine per process) that sends back each rank's memory.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/engine/simulate.hpp"

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
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    std::string out(1, '\1');
    try {
      SimOptions opt;
      opt.quiet = true;
      opt.record_spans = spans;
      const SimResult r = simulate(plan, opt);
      const char has = r.has_memory ? 1 : 0;
      const size_t n = r.ranks.size(), samples = r.memory_samples.size();
      out.append(&has, 1);
      out.append(reinterpret_cast<const char*>(&samples), sizeof samples);
      out.append(reinterpret_cast<const char*>(&n), sizeof n);
      for (const RankResult& rr : r.ranks) {
        const RankPeak p{rr.rank, rr.memory};
        out.append(reinterpret_cast<const char*>(&p), sizeof p);
      }
    } catch (const std::exception& e) {
      out = std::string(1, '\0') + e.what();
    }
    for (size_t at = 0; at < out.size();) {
      const ssize_t w = write(fds[1], out.data() + at, out.size() - at);
      if (w <= 0) break;
      at += size_t(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (msg.empty() || !WIFEXITED(status)) throw std::runtime_error("the simulation child crashed");
  if (msg[0] == 0) throw std::runtime_error(msg.substr(1));
  MemoryRun run;
  size_t at = 1, n = 0;
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
