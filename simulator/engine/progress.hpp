// The progress line on stderr: about once per wall-clock second, the simulated time reached, the
// share of ops done and an ETA. Never on stdout (that belongs to reports). A replay expected to
// take long is announced before it starts (mode, GPUs, about how long).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace stepsim::engine {

// Activities (compute ops plus transfers) a replay gets through per wall second on one core of
// the 2-core CI machine: 125-140 k/s on the full default DeepSeek-V3 step, skewed routing (one
// flow per EP peer) and a straggler alike (scripts/benchmark.sh, idle machine). The basis of the
// announcement and of the ETA before the first percent of the ops is done.
inline constexpr double kReplayActivitiesPerSecond = 125e3;

// What a progress line says, for a caller that shows it its own way (the Python module's callback).
struct ProgressUpdate {
  double simulated_s = 0;  // simulated time reached since the step began
  uint64_t ops_done = 0;
  double share = -1;       // of the ops done, 0 to 1; -1 when the count is unknown
  double eta_s = -1;       // wall seconds left; -1 when unknown
  double wall_s = 0;       // wall seconds since the replay began
};
using ProgressCallback = std::function<void(const ProgressUpdate&)>;

class Progress {
 public:
  // `expected_activities` 0: unknown, the ops stand for it. `print`: the line on stderr;
  // `callback` (may be empty): gets the same figures at the same moments, and once at the end.
  Progress(double expected_ops, double expected_activities, double t_start, bool print = true,
           ProgressCallback callback = {});
  // Says on stderr what is about to be replayed when it should take more than `threshold_s`.
  void announce(const std::string& mode, uint64_t gpus, double threshold_s = 30) const;
  // Call often (on every simulated-time advance); prints at most once per second.
  void tick(double sim_now, uint64_t ops_done);
  // The replay ended: the callback's last update (share 1), nothing printed.
  void finish(double sim_now, uint64_t ops_done);

 private:
  using Clock = std::chrono::steady_clock;
  ProgressUpdate update(Clock::time_point t, double sim_now, uint64_t ops_done) const;
  bool print_;
  ProgressCallback callback_;
  double expected_ops_;
  double t_start_;
  double estimate_s_;  // expected wall seconds, from kReplayActivitiesPerSecond
  Clock::time_point start_, last_;
};

}  // namespace stepsim::engine
