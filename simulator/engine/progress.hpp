// The progress line on stderr: about once per wall-clock second, the simulated time reached, the
// share of ops done and an ETA. Never on stdout (that belongs to reports). A replay expected to
// take long is announced before it starts (mode, GPUs, about how long).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace stepsim::engine {

// Ops a replay gets through per wall second on one core of the 2-core CI machine (full default
// DeepSeek-V3 plan, scripts/benchmark.sh): the basis of the announcement and of the ETA before
// the first percent of the ops is done.
inline constexpr double kReplayOpsPerSecond = 100e3;

class Progress {
 public:
  Progress(double expected_ops, double t_start);
  // Says on stderr what is about to be replayed when it should take more than `threshold_s`.
  void announce(const std::string& mode, uint64_t gpus, double threshold_s = 30) const;
  // Call often (on every simulated-time advance); prints at most once per second.
  void tick(double sim_now, uint64_t ops_done);

 private:
  using Clock = std::chrono::steady_clock;
  double expected_ops_;
  double t_start_;
  double estimate_s_;  // expected wall seconds, from kReplayOpsPerSecond
  Clock::time_point start_, last_;
};

}  // namespace stepsim::engine
