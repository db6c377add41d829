#include "simulator/engine/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace stepsim::engine {

Progress::Progress(double expected_ops, double expected_activities, double t_start, bool print,
                   ProgressCallback callback)
    : print_(print),
      callback_(std::move(callback)),
      expected_ops_(expected_ops),
      t_start_(t_start),
      estimate_s_((expected_activities > 0 ? expected_activities : expected_ops) / kReplayActivitiesPerSecond),
      start_(Clock::now()),
      last_(start_) {}

void Progress::announce(const std::string& mode, uint64_t gpus, double threshold_s) const {
  if (!print_ || !(estimate_s_ > threshold_s)) return;
  std::fprintf(stderr, "stepsim: replaying %llu GPUs (%s), %.1f M ops: about %.0f s on a machine like CI's\n",
               static_cast<unsigned long long>(gpus), mode.c_str(), expected_ops_ / 1e6, estimate_s_);
}

ProgressUpdate Progress::update(Clock::time_point t, double sim_now, uint64_t ops_done) const {
  ProgressUpdate u;
  u.simulated_s = sim_now - t_start_;
  u.ops_done = ops_done;
  u.wall_s = std::chrono::duration<double>(t - start_).count();
  if (expected_ops_ > 0) {
    u.share = std::min(1.0, double(ops_done) / expected_ops_);
    // Until a percent is done the measured rate says little: count down the estimate instead.
    u.eta_s = u.share >= 0.01 ? u.wall_s * (1 - u.share) / u.share : std::max(0.0, estimate_s_ - u.wall_s);
  }
  return u;
}

void Progress::tick(double sim_now, uint64_t ops_done) {
  const Clock::time_point t = Clock::now();
  if (t - last_ < std::chrono::seconds(1)) return;
  last_ = t;
  const ProgressUpdate u = update(t, sim_now, ops_done);
  if (print_) {
    if (u.share >= 0)
      std::fprintf(stderr, "stepsim: simulated %.6f s, %.1f%% of ops, ETA %.0f s\n", u.simulated_s, 100 * u.share, u.eta_s);
    else
      std::fprintf(stderr, "stepsim: simulated %.6f s, %llu ops done\n", u.simulated_s,
                   static_cast<unsigned long long>(u.ops_done));
  }
  if (callback_) callback_(u);
}

void Progress::finish(double sim_now, uint64_t ops_done) {
  if (!callback_) return;
  ProgressUpdate u = update(Clock::now(), sim_now, ops_done);
  u.share = 1;
  u.eta_s = 0;
  callback_(u);
}

}  // namespace stepsim::engine
