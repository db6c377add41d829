#include "schedules/one_f_one_b.hpp"

#include <algorithm>
#include <stdexcept>

namespace stepsim::sched {

OneFOneB::OneFOneB(int64_t ranks, int64_t microbatches) : Schedule(ranks, microbatches) {
  if (ranks < 1 || microbatches < 1) throw std::invalid_argument("1f1b needs at least one rank and one microbatch");
}

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
