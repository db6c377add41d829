// Hands out a GPU's stream ids or transfer channel ids in the order a workload asks for them, so
// that no workload numbers them by hand: a new kind of traffic takes the next id.
#pragma once

#include <limits>
#include <stdexcept>
#include <vector>

namespace stepsim::ops {

template <class Id>
class IdCounter {
 public:
  Id take() {
    if (next_ > int(std::numeric_limits<Id>::max())) throw std::length_error("more streams or transfer channels than their ids hold");
    return Id(next_++);
  }
  std::vector<Id> take(int n) {
    std::vector<Id> ids;
    for (int i = 0; i < n; ++i) ids.push_back(take());
    return ids;
  }
  int count() const { return next_; }  // ids handed out so far

 private:
  int next_ = 0;
};

}  // namespace stepsim::ops
