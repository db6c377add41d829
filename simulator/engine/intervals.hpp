// Time intervals and the measure of their union: the moving time of a set of flows, and how much
// of an idle interval data was moving in.
#pragma once

#include <vector>

namespace stepsim::engine {

struct Interval {
  double begin = 0;
  double end = 0;
};

// Sorts and merges `v` in place into disjoint intervals; returns their total length.
double merge_intervals(std::vector<Interval>& v);

// Length of (union of v) within [lo, hi]; reorders v.
double covered_within(std::vector<Interval>& v, double lo, double hi);

// Length of a union of intervals that arrive out of order, in bounded memory: once no interval
// still to come can start before `horizon`, everything ending by then is folded into the total.
class IntervalUnion {
 public:
  void add(const Interval& iv) { pending_.push_back(iv); }
  void add(const std::vector<Interval>& ivs) { pending_.insert(pending_.end(), ivs.begin(), ivs.end()); }
  // No interval added later starts before `horizon`.
  void settle(double horizon);
  double total();  // the whole union so far

 private:
  std::vector<Interval> pending_;
  double settled_ = 0;
};

}  // namespace stepsim::engine
