#include "simulator/engine/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace stepsim::engine {

Progress::Progress(double expected_ops, double expected_activities, double t_start)
    : expected_ops_(expected_ops),
      t_start_(t_start),
      estimate_s_((expected_activities > 0 ? expected_activities : expected_ops) / kReplayActivitiesPerSecond),
      start_(Clock::now()),
      last_(start_) {}

void Progress::announce(const std::string& mode, uint64_t gpus, double threshold_s) const {
  if (!(estimate_s_ > threshold_s)) return;
  std::fprintf(stderr, "stepsim: replaying %llu GPUs (%s), %.1f M ops: about %.0f s on a machine like CI's\n",
               static_cast<unsigned long long>(gpus), mode.c_str(), expected_ops_ / 1e6, estimate_s_);
}

void Progress::tick(double sim_now, uint64_t ops_done) {
  const Clock::time_point t = Clock::now();
  if (t - last_ < std::chrono::seconds(1)) return;
  last_ = t;
  const double wall = std::chrono::duration<double>(t - start_).count();
  if (expected_ops_ > 0) {
    const double share = std::min(1.0, double(ops_done) / expected_ops_);
    // Until a percent is done the measured rate says little: count down the estimate instead.
    const double eta = share >= 0.01 ? wall * (1 - share) / share : std::max(0.0, estimate_s_ - wall);
    std::fprintf(stderr, "stepsim: simulated %.6f s, %.1f%% of ops, ETA %.0f s\n", sim_now - t_start_,
                 100 * share, eta);
  } else {
    std::fprintf(stderr, "stepsim: simulated %.6f s, %llu ops done\n", sim_now - t_start_,
                 static_cast<unsigned long long>(ops_done));
  }
}

}  // namespace stepsim::engine
