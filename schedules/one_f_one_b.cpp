#include "schedules/one_f_one_b.hpp"

#include <algorithm>

namespace stepsim::sched {

std::vector<ChunkOp> OneFOneB::program(int64_t rank) const {
  const int64_t n = microbatches();
  const int64_t warmup = std::min(ranks() - 1 - rank, n);
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * n));
  auto forward = [&](int64_t mb) { ops.push_back({Pass::F, false, {int32_t(mb), 0}, {}}); };
  auto backward = [&](int64_t mb) { ops.push_back({Pass::B, false, {}, {int32_t(mb), 0}}); };
  for (int64_t i = 0; i < warmup; ++i) forward(i);
  for (int64_t i = 0; i < n - warmup; ++i) {
    forward(warmup + i);
    backward(i);
  }
  for (int64_t i = n - warmup; i < n; ++i) backward(i);
  return ops;
}

}  // namespace stepsim::sched
