#include "simulator/engine/intervals.hpp"

#include <algorithm>

namespace stepsim::engine {

double merge_intervals(std::vector<Interval>& v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].begin <= v[out].end)
      v[out].end = std::max(v[out].end, v[i].end);
    else
      v[++out] = v[i];
  }
  v.resize(out + 1);
  double total = 0;
  for (const Interval& iv : v) total += iv.end - iv.begin;
  return total;
}

double covered_within(std::vector<Interval>& v, double lo, double hi) {
  for (Interval& iv : v) {
    iv.begin = std::max(iv.begin, lo);
    iv.end = std::min(iv.end, hi);
  }
  std::erase_if(v, [](const Interval& iv) { return iv.end <= iv.begin; });
  return merge_intervals(v);
}

void IntervalUnion::settle(double horizon) {
  if (pending_.size() < 256) return;  // amortise the sort
  merge_intervals(pending_);
  size_t keep = 0;
  for (const Interval& iv : pending_) {
    if (iv.end <= horizon)
      settled_ += iv.end - iv.begin;
    else
      pending_[keep++] = iv;
  }
  pending_.resize(keep);
}

double IntervalUnion::total() { return settled_ + merge_intervals(pending_); }

}  // namespace stepsim::engine
