#include "schedules/zb_v.hpp"

#include <algorithm>
#include <string>

namespace stepsim::sched {

std::vector<ChunkOp> ZbV::program(int64_t rank) const {
  const int64_t P = ranks(), m = microbatches(), r = rank;
  int32_t f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(6 * m));
  const auto F = [&](int32_t c) { ops.push_back({Pass::F, false, {f[c]++, c}, {}}); };
  const auto B = [&](int32_t c) { ops.push_back({Pass::B, true, {}, {b[c]++, c}}); };
  const auto W = [&](int32_t c) { ops.push_back({Pass::W, false, {}, {w[c]++, c}}); };
  for (int64_t i = 0; i < 2 * (P - r) - 1; ++i) F(0);
  for (int64_t i = 0; i < r; ++i) F(1), F(0);
  for (int64_t i = 0; i < P - r; ++i) F(1), B(1), W(1);
  while (f[1] < f[0] || f[0] < m) {
    if (f[0] < m) F(0);
    B(0), W(0), F(1), B(1), W(1);
  }
  for (int64_t i = 0; i < r; ++i) B(0), B(1);
  for (int64_t i = 0; i < P - r; ++i) B(0), W(0);
  while (w[1] < b[1]) W(1);
  while (w[0] < b[0]) W(0);
  return ops;
}

double ZbV::bubble_s(const ChunkTimes& t) const {
  // At the times the order is built for (F = B - W = W) only the fill is left: the last rank's
  // first forward waits for P-1 forwards, (P-1)F = (P-1)(F+B-2W), ZB-H1's form. Other times
  // shift the handcrafted order's gaps (the paper's greedy ZB-V re-plans for them).
  return double(ranks() - 1) * (t.f_s + t.b_s - 2 * t.w_s);
}

}  // namespace stepsim::sched
