// The progress line on stderr: about once per wall-clock second, the simulated time reached, the
// share of ops done and an ETA. Never on stdout (that belongs to reports).
#pragma once

#include <chrono>
#include <cstdint>

namespace stepsim::engine {

class Progress {
 public:
  Progress(double expected_ops, double t_start);
  // Call often (on every simulated-time advance); prints at most once per second.
  void tick(double sim_now, uint64_t ops_done);

 private:
  using Clock = std::chrono::steady_clock;
  double expected_ops_;
  double t_start_;
  Clock::time_point start_, last_;
};

}  // namespace stepsim::engine
