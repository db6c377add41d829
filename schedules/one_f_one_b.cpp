#include "schedules/one_f_one_b.hpp"

#include <algorithm>

namespace stepsim::sched {

std::vector<ChunkOp> OneFOneB::program(int64_t rank) const {
  const int64_t n = microbatches();
  const int64_t warmup = forwards_first_ ? n : std::min(ranks() - 1 - rank, n);
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * n));
  auto forward = [&](int64_t mb) { ops.push_back({Pass::F, false, {int32_t(mb), 0}, {}}); };
  auto backward = [&](int64_t mb) { ops.push_back({Pass::B, false, {}, {int32_t(mb), 0}}); };
  one_forward_one_backward(n, warmup, forward, backward);
  return ops;
}

}  // namespace stepsim::sched
