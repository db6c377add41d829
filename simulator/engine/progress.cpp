#include "simulator/engine/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace stepsim::engine {

Progress::Progress(double expected_ops, double t_start)
    : expected_ops_(expected_ops), t_start_(t_start), start_(Clock::now()), last_(start_) {}

void Progress::tick(double sim_now, uint64_t ops_done) {
  const Clock::time_point t = Clock::now();
  if (t - last_ < std::chrono::seconds(1)) return;
  last_ = t;
  const double wall = std::chrono::duration<double>(t - start_).count();
  if (expected_ops_ > 0) {
    const double share = std::min(1.0, double(ops_done) / expected_ops_);
    const double eta = share > 0 ? wall * (1 - share) / share : 0;
    std::fprintf(stderr, "stepsim: simulated %.6f s, %.1f%% of ops, ETA %.0f s\n", sim_now - t_start_,
                 100 * share, eta);
  } else {
    std::fprintf(stderr, "stepsim: simulated %.6f s, %llu ops done\n", sim_now - t_start_,
                 static_cast<unsigned long long>(ops_done));
  }
}

}  // namespace stepsim::engine
